"""An option's preview as styled lines: windowed, and only the lines shown sanitised,
tabs expanded and cut by cells.

A preview is model-written code, config or a mock-up: its lines keep their indentation and
are cut (marked ``…``) rather than wrapped, so columns stay aligned; ``J``/``K`` scroll it.
"""

from __future__ import annotations

from dsh_cli.interaction import sanitize
from dsh_cli.providers.terminal.text import Line, cell_width, fit

__all__ = ["SIDE_BY_SIDE", "preview_lines", "preview_window"]

SIDE_BY_SIDE = 100  # terminal columns from which the preview is drawn beside the list
TAB = 4


def preview_lines(text: str) -> list[str]:
    """The preview's lines as written: ``preview_window`` makes the ones shown safe.

    Sanitising line by line is as safe as the whole text at once (an escape cut at a line's
    end goes with it) and costs what the window shows, not 10,000 characters a frame.
    """
    return text.replace("\r\n", "\n").split("\n")


def _drawn(line: str, width: int) -> Line:
    """One line sanitised, tabs expanded, cut to ``width`` cells (wide characters count two)."""
    return [("", fit(sanitize(line).expandtabs(TAB).rstrip(), width))]


def preview_window(lines: list[str], offset: int, room: int, width: int
                   ) -> tuple[list[Line], int, int]:
    """At most ``room`` lines of the preview from ``offset``, a "lines a-b of n" marker
    last when it is cut; returns the lines, the clamped offset and how many are shown."""
    if len(lines) <= room:
        return [_drawn(line, width) for line in lines], 0, len(lines)
    shown = max(1, room - 1)
    offset = min(max(0, offset), len(lines) - shown)
    end = offset + shown
    marks = (f" lines {offset + 1}-{end} of {len(lines)} · J/K scroll",
             f" lines {offset + 1}-{end} of {len(lines)}", f" {offset + 1}-{end}/{len(lines)}")
    mark = next((mark for mark in marks if cell_width(mark) <= width), marks[-1])
    body = [_drawn(line, width) for line in lines[offset:end]]
    return [*body, [("class:more", fit(mark, width))]], offset, shown
