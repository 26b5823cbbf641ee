"""An option's preview as styled lines: sanitised, tabs expanded, cut by cells, windowed.

A preview is model-written code, config or a mock-up: its lines keep their indentation and
are cut (marked ``…``) rather than wrapped, so columns stay aligned; ``J``/``K`` scroll it.
"""

from __future__ import annotations

from dsh_cli.interaction import sanitize
from dsh_cli.providers.terminal.text import Line, cell_width, fit

__all__ = ["SIDE_BY_SIDE", "preview_lines", "preview_window"]

SIDE_BY_SIDE = 100  # terminal columns from which the preview is drawn beside the list
TAB = 4


def preview_lines(text: str, width: int) -> list[str]:
    """The preview's lines, each at most ``width`` cells (wide characters count two)."""
    return [fit(line.expandtabs(TAB).rstrip(), width)
            for line in sanitize(text).split("\n")]


def preview_window(lines: list[str], offset: int, room: int, width: int
                   ) -> tuple[list[Line], int, int]:
    """At most ``room`` lines of the preview from ``offset``, a "lines a-b of n" marker
    last when it is cut; returns the lines, the clamped offset and how many are shown."""
    if len(lines) <= room:
        return [[("class:preview", line)] for line in lines], 0, len(lines)
    shown = max(1, room - 1)
    offset = min(max(0, offset), len(lines) - shown)
    end = offset + shown
    marks = (f" lines {offset + 1}-{end} of {len(lines)} · J/K scroll",
             f" lines {offset + 1}-{end} of {len(lines)}", f" {offset + 1}-{end}/{len(lines)}")
    mark = next((mark for mark in marks if cell_width(mark) <= width), marks[-1])
    body: list[Line] = [[("class:preview", line)] for line in lines[offset:end]]
    return [*body, [("class:more", fit(mark, width))]], offset, shown
