"""A window that writes each fragment a line ends with, when marked ``RUN``, as one cell.

prompt-toolkit's renderer compares and writes a frame cell by cell (about 1.7 µs a cell). A
cell as wide as its text is how it keeps a wide character; given a whole preview line, it
compares the line once and writes it in one piece, the same characters, instead of walking
it a character at a time.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

from prompt_toolkit.layout import Window
from prompt_toolkit.layout.screen import Char, Screen, WritePosition
from prompt_toolkit.utils import get_cwidth

from dsh_cli.providers.terminal.text import RUN, Line

__all__ = ["Run", "RunWindow", "take_runs"]

_AFTER_RUN = len(RUN) + 1  # "[run] class:more" is drawn as "class:more"
# what prompt-toolkit writes behind a wide character: unlike any drawn cell, so a later
# frame that draws there writes it
_BEHIND = Char("", "")


class Run(NamedTuple):
    """A fragment left out of the window's text: drawn at ``column`` of ``line``."""

    line: int
    column: int
    style: str
    text: str


def take_runs(line: Line, number: int, runs: list[Run]) -> Line:
    """``line`` without the ``RUN`` fragments it ends with, which are noted in ``runs``."""
    end = len(line)
    while end and line[end - 1][0].startswith(RUN):
        end -= 1
    if end == len(line):
        return line
    kept = line[:end]
    column = 0
    for _, part in kept:
        column += get_cwidth(part)
    for style, text in line[end:]:
        runs.append(Run(number, column, style[_AFTER_RUN:], text))
        column += get_cwidth(text)
    return kept


class RunWindow(Window):
    """A ``Window`` that draws the ``runs`` noted while its content was built.

    Under a run only its last cell is marked, so the renderer knows where the row ends (and
    erases what a longer row left). The other cells stay unwritten: a later frame redraws
    any cell there unless it is an unwritten blank too, and no line has one before its end
    (the blank beside a preview is a run of spaces), so no text of a run can be left behind.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.runs: list[Run] = []

    def write_to_screen(self, screen: Screen, mouse_handlers: Any, write_position: WritePosition,
                        parent_style: str, erase_bg: bool, z_index: int | None) -> None:
        super().write_to_screen(screen, mouse_handlers, write_position, parent_style, erase_bg,
                                z_index)
        z_index = z_index if self.z_index is None else self.z_index
        draw = partial(self._draw_runs, screen, write_position)
        if z_index is None or z_index <= 0:  # drawn now, as the window's text was
            draw()
        else:
            screen.draw_with_z_index(z_index=z_index, draw_func=draw)

    def _draw_runs(self, screen: Screen, where: WritePosition) -> None:
        info = self.render_info
        if info is None:
            return
        for run in self.runs:
            y = run.line - info.vertical_scroll
            if not 0 <= y < where.height:
                continue
            row = screen.data_buffer[where.ypos + y]
            x = run.column - self.horizontal_scroll
            char = Char(run.text, run.style)
            if char.width == 0:  # nothing to draw; a cell of no width would lose the cursor
                continue
            if x >= 0 and x + char.width <= where.width:
                row[where.xpos + x] = char
                if char.width > 1:
                    row[where.xpos + x + char.width - 1] = _BEHIND
                continue
            for one in run.text:  # cut by the window's edge: a cell a character, as it would be
                width = get_cwidth(one)
                if width and x >= 0 and x + width <= where.width:
                    row[where.xpos + x] = Char(one, run.style)
                    if width > 1:
                        row[where.xpos + x + 1] = _BEHIND
                x += width
