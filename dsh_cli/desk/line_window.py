"""A prompt-toolkit window that draws each of its lines as one cell, made once per line.

prompt-toolkit copies a window's text into its screen a character at a time
(``copy_line``) and its renderer compares the new screen with the last one cell by cell
(``_output_screen_diff``): in the inbox that is most of a key's time, in proportion to
the characters on screen. ``LineWindow`` keeps one ``Char`` per line, as wide as the line
(as ``providers/terminal/runs.py`` does for a preview's lines): the copy is one store a
line, and the renderer compares a line once and writes it in one piece, the same
characters. A line's cell is made when its text or style first appears, not per frame.

Every line is one cell (none is drawn a character at a time), so no cell a longer line
left on the terminal can be mistaken for an unwritten blank: a changed line is rewritten
whole and the rest of the row erased. The last cell under a wide line is marked so the
renderer knows where the row ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit.application.current import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import UIContent, UIControl, Window
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Char, Screen, WritePosition
from prompt_toolkit.utils import get_cwidth

__all__ = ["LineControl", "LineWindow"]

Line = tuple[str, str]  # (style, text): one line, no newline in it
# what prompt-toolkit writes behind a wide character; unlike any drawn cell
_BEHIND = Char("", "")
# a character prompt-toolkit shows otherwise (``^[`` for escape): shown the same way here
_SHOWN = str.maketrans(Char.display_mappings)


class _NoMouse(MouseHandlers):
    """Mouse handlers that store none: with mouse support off no mouse event comes to read
    them, and a window stores one per cell of its area every frame."""

    def set_mouse_handler_for_range(self, x_min: int, x_max: int, y_min: int, y_max: int,
                                    handler: Any) -> None:
        return None


_NO_MOUSE = _NoMouse()


def _cut(text: str, width: int) -> str:
    """``text`` clipped at ``width`` cells, as a window clips a line too long for it."""
    out, used = [], 0
    for char in text:
        size = get_cwidth(char)
        if used + size > width:
            break
        out.append(char)
        used += size
    return "".join(out)


class LineControl(UIControl):
    """The lines ``lines()`` gives, each as one ``Char`` (``cells``), for a ``LineWindow``."""

    def __init__(self, lines: Callable[[], Sequence[Line]]) -> None:
        self._lines = lines
        self._made: dict[tuple[str, str, int], Char] = {}  # the cells of the last frame
        self._before: dict[tuple[str, str, int], Char] = {}  # and of the one before it
        self._frame: tuple[int, int] | None = None  # (render counter, width) of ``cells``
        self._content: UIContent | None = None
        self.cells: list[Char] = []

    def is_focusable(self) -> bool:
        return True

    def _cell(self, style: str, text: str, width: int, made: dict[tuple[str, str, int], Char]
              ) -> Char:
        key = (style, text, width)
        char = self._made.get(key) or self._before.get(key)  # ↓ then ↑ draws a row again
        if char is None:
            shown = text.translate(_SHOWN)
            char = Char(shown, style)
            if char.width > width:
                char = Char(_cut(shown, width), style)
        made[key] = char
        return char

    def create_content(self, width: int, height: int | None) -> UIContent:
        frame = (get_app().render_counter, width)
        if self._frame == frame and self._content is not None:
            return self._content  # asked again in the same frame (the height, then the text)
        made: dict[tuple[str, str, int], Char] = {}
        self.cells = [self._cell(style, text, width, made) for style, text in self._lines()]
        self._before, self._made = self._made, made
        empty: StyleAndTextTuples = []  # the cells are stored by the window, not copied
        self._content = UIContent(get_line=lambda number: empty, line_count=len(self.cells),
                                  show_cursor=False)
        self._frame = frame
        return self._content

    def preferred_height(self, width: int, max_available_height: int, wrap_lines: bool,
                         get_line_prefix: Any) -> int:
        return self.create_content(width, None).line_count


class LineWindow(Window):
    """A ``Window`` showing a ``LineControl``: its cells stored once a line, after the window.

    The lines' own styles are drawn; the window is meant to have none of its own. With
    mouse support off it stores no mouse handlers (nothing would read them).
    """

    def __init__(self, content: LineControl, **kwargs: Any) -> None:
        super().__init__(content, wrap_lines=False, **kwargs)
        self.lines = content

    def write_to_screen(self, screen: Screen, mouse_handlers: Any, write_position: WritePosition,
                        parent_style: str, erase_bg: bool, z_index: int | None) -> None:
        if not get_app().mouse_support():
            mouse_handlers = _NO_MOUSE
        super().write_to_screen(screen, mouse_handlers, write_position, parent_style, erase_bg,
                                z_index)
        z_index = z_index if self.z_index is None else self.z_index
        if z_index is None or z_index <= 0:  # drawn now, as the window's own text was
            self._store(screen, write_position)
        else:
            screen.draw_with_z_index(z_index=z_index,
                                     draw_func=lambda: self._store(screen, write_position))

    def _store(self, screen: Screen, write_position: WritePosition) -> None:
        info = self.render_info
        if info is None or write_position.width <= 0:
            return
        cells = self.lines.cells
        x = write_position.xpos
        for y in range(write_position.height):
            number = y + info.vertical_scroll
            if number >= len(cells):
                break
            char = cells[number]
            if not char.width:
                continue
            row = screen.data_buffer[write_position.ypos + y]
            row[x] = char
            if char.width > 1:
                row[x + char.width - 1] = _BEHIND
