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

Even so prompt-toolkit's renderer visits every row of every frame (the window's copy,
the screen's diff), so a key that moves a list's cursor cost in proportion to the rows
shown. ``LineRenderer`` writes a frame that changed only some lines as those rows, the
bytes the diff would write for them; the rest of prompt-toolkit's frame is skipped. It
reads the renderer's own state (prompt-toolkit 3.0's ``Renderer``: the last screen, the
cursor, the style caches); ``tests/desk/test_line_window.py`` compares its frames with a
plain window's through a terminal emulator, so a prompt-toolkit that changes them fails
there, not on a screen.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import compress, count
from operator import is_not, methodcaller
from typing import Any

from prompt_toolkit.application.current import get_app
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import UIContent, UIControl, Window
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Char, Screen, WritePosition
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.renderer import Renderer
from prompt_toolkit.utils import get_cwidth

__all__ = ["LineControl", "LineRenderer", "LineWindow", "draw_changed_lines"]

Line = tuple[str, str]  # (style, text): one line, no newline in it
# what prompt-toolkit writes behind a wide character; unlike any drawn cell
_BEHIND = Char("", "")
# a character prompt-toolkit shows otherwise (``^[`` for escape): shown the same way here
_SHOWN = str.maketrans(Char.display_mappings)
_FIRST = methodcaller("get", 0)  # a screen row's first cell, None when it has none
# what prompt-toolkit's ``Vt100_Output`` writes for these (the partial frames are VT100's)
_RESET, _ERASE_LINE = "\x1b[0m", "\x1b[K"
_AUTOWRAP_OFF, _AUTOWRAP_ON = "\x1b[?7l", "\x1b[?7h"


_ROWS: list[Callable[[], defaultdict[int, Char]]] = []  # how a screen makes a row, once known


def _row() -> defaultdict[int, Char]:
    """An empty row of a screen (its missing cells read as blanks)."""
    if not _ROWS:
        factory = Screen().data_buffer.default_factory
        assert factory is not None
        _ROWS.append(factory)
    return _ROWS[0]()


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
        self._drawn: Sequence[Line] = ()  # the lines ``cells`` show
        self._width = 0  # and their width
        self.cells: list[Char] = []

    def is_focusable(self) -> bool:
        return True

    def _cell(self, style: str, text: str, width: int, made: dict[tuple[str, str, int], Char]
              ) -> Char:
        key = (style, text, width)
        # this frame's (a line made anew with the same text), the last's, the one before
        # (↓ then ↑ draws a row again)
        char = made.get(key) or self._made.get(key) or self._before.get(key)
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
        lines = self._lines()
        if lines is not self._drawn or width != self._width:
            self.cells = self._cells(lines, width)
            self._drawn, self._width = lines, width
        if self._content is None or self._content.line_count != len(self.cells):
            empty: StyleAndTextTuples = []  # the cells are stored by the window, not copied
            self._content = UIContent(get_line=lambda number: empty,
                                      line_count=len(self.cells), show_cursor=False)
        self._frame = frame
        return self._content

    def _cells(self, lines: Sequence[Line], width: int) -> list[Char]:
        """A cell per line: the last frame's where the same line (the same object) is at
        the same place, so a frame that changes two lines looks up two; a line made again
        with the same text (a list's help line, a row scrolled by) gets the cell it had,
        so the renderer sees it unchanged."""
        made: dict[tuple[str, str, int], Char] = {}
        drawn = self._drawn
        if width == self._width and len(lines) == len(drawn):
            cells = list(self.cells)
            changed = list(compress(count(), map(is_not, lines, drawn)))
            for number in changed:  # replaced: a cursor moving back draws it again
                style, text = drawn[number]
                made[style, text, width] = cells[number]
            for number in changed:
                style, text = lines[number]
                cells[number] = self._cell(style, text, width, made)
        else:
            cells = [self._cell(style, text, width, made) for style, text in lines]
        self._before, self._made = self._made, made
        return cells

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
        # where the last frame put all its lines, one a row from column 0: (y, width, lines)
        self.drawn: tuple[int, int, int] | None = None

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
        self.drawn = None
        if info is None or write_position.width <= 0:
            return
        cells = self.lines.cells
        x = write_position.xpos
        # every line on a row of its own from column 0 (no margin, no scroll); the window
        # may be taller than its lines (a renderer keeps the height a longer list had)
        if (x == 0 and info.vertical_scroll == 0 and len(cells) <= write_position.height
                and info.window_width == write_position.width):
            self.drawn = (write_position.ypos, write_position.width, len(cells))
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


class LineRenderer(Renderer):
    """prompt-toolkit's renderer for a layout that is one ``LineWindow``: a frame in which
    only some of its lines changed (a cursor moving in a list) writes those lines.

    prompt-toolkit draws every frame whole into a new screen and compares it with the last
    row by row, so a frame costs in proportion to the rows shown, however few changed.
    Here the window's cells are compared with the last screen's by identity (a line's cell
    is made once: the same line is the same cell, ``LineControl``), each changed row is
    written as the diff writes it and put into the last screen, which stays the frame on
    the terminal, so the next whole frame is compared with what is there. Anything else
    (the size, the style, the number of lines, the last line, which carries the window's
    ``last-line`` style, a done frame) is drawn whole, as before, and so is every frame
    on an output that is not a VT100 (``Vt100_Output``): the rows are written as its bytes.
    """

    def render(self, app: Any, layout: Any, is_done: bool = False) -> None:
        if is_done or not self._changed_lines_only(app, layout):
            super().render(app, layout, is_done)

    def _changed_lines_only(self, app: Any, layout: Any) -> bool:
        """Draw the frame by its changed rows; False when it must be drawn whole."""
        window = layout.container
        last = self._last_screen
        if (not isinstance(self.output, Vt100_Output) or not isinstance(window, LineWindow)
                or window.drawn is None or last is None
                or self._attrs_for_style is None or self._style_string_has_style is None
                or app.exit_style or self.output.get_size() != self._last_size
                or self.mouse_support() != self._mouse_support_enabled
                or self.style.invalidation_hash() != self._last_style_hash
                or app.style_transformation.invalidation_hash()
                != self._last_transformation_hash
                or (depth := app.color_depth) != self._last_color_depth
                or app.cursor.get_cursor_shape(app) != self._last_cursor_shape):
            return False
        y, width, rows = window.drawn
        window.lines.create_content(width, None)
        cells = window.lines.cells
        if len(cells) != rows:
            return False
        # the rows whose first cell is not the line's (a line's cell is made once): compared
        # in C, as ``LineControl`` finds its changed lines, not a row at a time in Python
        shown = map(_FIRST, map(last.data_buffer.__getitem__, range(y, y + rows)))
        changed = list(compress(count(), map(is_not, cells, shown)))
        if changed and (changed[-1] == rows - 1 or not all(cells[row].width for row in changed)):
            return False  # the last line's style fill, an empty line: drawn whole
        if changed:
            self._draw_rows(app, y, cells, changed, depth)
        self.output.flush()
        return True

    def _draw_rows(self, app: Any, y: int, cells: list[Char], changed: list[int],
                   depth: Any) -> None:
        """The window's ``changed`` rows (its first at row ``y``) written as their ``cells``,
        the bytes prompt-toolkit's diff (``_output_screen_diff``) writes for a row whose
        one cell changed: the cell, the rest of the row erased when it is shorter than the
        row was; then the cursor back where the diff leaves it. The last screen holds the
        rows after, as it would after a whole frame. The moves are put together as strings,
        the bytes the diff's output calls write (``_motion``), and written with the row's
        text: this is most of a key that moves a list's cursor, and an output call for
        each escape sequence cost as much as the rest of it."""
        assert self._last_screen is not None and self._last_size is not None
        attrs = self._attrs_for_style
        assert attrs is not None
        output, last = self.output, self._last_screen
        screen, columns = last.data_buffer, self._last_size.columns
        if last.show_cursor:
            output.hide_cursor()  # as the diff does, against flicker
        # a cell as wide as the screen must not wrap
        pending = "" if self.full_screen else _AUTOWRAP_OFF
        x, at, style = self._cursor_pos.x, self._cursor_pos.y, self._last_style
        for number in changed:
            cell, row_y = cells[number], y + number
            before = screen[row_y]
            was = before[0]
            # a row this window drew holds its cell and, under its last column, the mark:
            # it ends there (read without a call: a key writes two rows)
            if len(before) == 2 and was.width > 1 and before.get(was.width - 1) is _BEHIND:
                end = min(columns - 1, was.width - 1)
            else:
                end = min(columns - 1, self._row_end(before))
            row = screen[row_y] = _row()
            row[0] = cell
            width = cell.width
            if width > 1:
                row[width - 1] = _BEHIND
            if cell.char != was.char or cell.style != was.style:
                if row_y > at:
                    style = None  # the diff resets the style before new lines
                output.write_raw(pending + _motion(x, at, 0, row_y, columns))
                pending, at = "", row_y
                if style != cell.style and (not style or attrs[cell.style] != attrs[style]):
                    output.set_attributes(attrs[cell.style], depth)
                output.write(cell.char)  # the output's write: an escape in it is shown, not run
                x, style = width, cell.style
            # the row's last column as the diff reads it: under the cell's last character
            # (``_BEHIND`` is no blank; a drawn line is never a lone blank)
            new_end = min(columns - 1, width - 1)
            if new_end < end:  # the row was longer: the rest of it goes
                pending += _motion(x, at, new_end + 1, row_y, columns) + _RESET + _ERASE_LINE
                x, at, style = new_end + 1, row_y, None
        cursor = last.get_cursor_position(app.layout.current_window)
        pending += _motion(x, at, cursor.x, cursor.y, columns)
        output.write_raw(pending + ("" if self.full_screen else _AUTOWRAP_ON) + _RESET)
        self._cursor_pos, self._last_style = cursor, None
        if last.show_cursor:
            output.show_cursor()

    def _row_end(self, row: dict[int, Char]) -> int:
        """The diff's last column of a row: its last cell not a blank without style."""
        styled = self._style_string_has_style
        assert styled is not None
        end = 0
        for index, cell in row.items():
            if index > end and (cell.char != " " or styled[cell.style]):
                end = index
        return end


def _motion(x: int, y: int, to_x: int, to_y: int, columns: int) -> str:
    """The VT100 bytes prompt-toolkit's diff writes to move the cursor from column ``x`` of
    row ``y`` to column ``to_x`` of row ``to_y`` (``move_cursor``: down by new lines, the
    style reset first, so no background is drawn; up, then across)."""
    if to_y > y:
        return _RESET + "\r\n" * (to_y - y) + _forward(to_x)
    up = "" if to_y == y else "\x1b[A" if y - to_y == 1 else f"\x1b[{y - to_y}A"
    if x >= columns - 1:
        return up + "\r" + _forward(to_x)
    if to_x < x:
        return up + ("\b" if x - to_x == 1 else f"\x1b[{x - to_x}D")
    return up + _forward(to_x - x)


def _forward(columns: int) -> str:
    """The bytes ``Vt100_Output.cursor_forward`` writes to move ``columns`` right."""
    return "" if not columns else "\x1b[C" if columns == 1 else f"\x1b[{columns}C"


def draw_changed_lines(app: Any) -> None:
    """Give ``app``, whose layout is one ``LineWindow``, a ``LineRenderer``."""
    old = app.renderer
    app.renderer = LineRenderer(old.style, old.output, full_screen=old.full_screen,
                                mouse_support=old.mouse_support,
                                cpr_not_supported_callback=old.cpr_not_supported_callback)
