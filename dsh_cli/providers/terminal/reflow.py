"""Resizing a shown frame: whether the terminal rewraps its rows, and where that puts them.

After a resize prompt-toolkit moves the cursor up as many rows as it drew above it, erases
down and draws again. A terminal that *reflows* on a resize (tmux, VTE, kitty, iTerm2,
WezTerm, Windows Terminal, ...) rewraps each drawn row to the new width first, so a
narrower window puts the frame's first row further up than that: the old frame's top stayed
above the new one, a stale copy in the scrollback. A terminal that *truncates* (xterm, the
Linux console) leaves every row where it was, and counting rewrapped rows there would erase
the conversation above the frame. So the renderer counts them only where
``terminal_reflows`` says the terminal rewraps (``DSH_TERMINAL_REFLOW`` forces either way);
everywhere else prompt-toolkit's own count stands. The count follows tmux's rules: each row
is one logical line (prompt-toolkit ends rows with CR LF and draws with autowrap off, so a
wider window never joins two), its written cells wrap at the new width (a wide character
that does not fit starts the next row), and the cursor keeps its offset in its line, or the
line's end when it sat past the last written cell.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit.layout.screen import Screen
    from prompt_toolkit.renderer import Renderer

__all__ = ["REFLOW_SETTING", "cursor_row_after_reflow", "follow_reflow", "terminal_reflows"]

REFLOW_SETTING = "DSH_TERMINAL_REFLOW"
_YES = ("1", "yes", "on", "true")
_NO = ("0", "no", "off", "false")
# TERM values set by terminals that rewrap on a resize, and those that truncate.
_REFLOWING_TERMS = ("xterm-kitty", "alacritty", "foot", "foot-extra", "xterm-ghostty",
                    "wezterm", "contour")
_REFLOWING_PROGRAMS = ("iTerm.app", "WezTerm", "vscode", "Apple_Terminal", "ghostty",
                       "Hyper", "Tabby")
_REFLOWING_MARKERS = ("KITTY_WINDOW_ID", "ALACRITTY_WINDOW_ID", "WEZTERM_PANE", "WT_SESSION")
_TRUNCATING_TERMS = ("linux", "rxvt", "st", "st-", "putty", "eterm", "vt")
_VTE_REFLOWS_SINCE = 3600  # VTE 0.36 rewraps on resize; VTE_VERSION is major*10000+minor*100


def terminal_reflows(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this terminal rewraps drawn rows when its width changes; unknown is no."""
    env = os.environ if environ is None else environ
    forced = env.get(REFLOW_SETTING, "").strip().lower()
    if forced in _YES or forced in _NO:
        return forced in _YES
    term = env.get("TERM", "").lower()
    if term.startswith("tmux"):
        return True  # tmux is the innermost terminal (it sets TERM); it rewraps its own grid
    if env.get("STY"):  # GNU screen somewhere in the chain: its grid decides, and may not wrap
        return False
    if env.get("TMUX") and term.startswith("screen"):
        return True  # tmux with its older default TERM
    # xterm sets XTERM_VERSION; one started from a reflowing terminal inherits its markers.
    if env.get("XTERM_VERSION") or term.startswith(_TRUNCATING_TERMS):
        return False
    if term.startswith(_REFLOWING_TERMS) or env.get("TERM_PROGRAM") in _REFLOWING_PROGRAMS:
        return True
    if any(env.get(name) for name in _REFLOWING_MARKERS):
        return True
    vte = env.get("VTE_VERSION", "")
    return vte.isdigit() and int(vte) >= _VTE_REFLOWS_SINCE


def _cells(screen: Screen, y: int,
           has_style: Mapping[str, bool] | None) -> Iterator[tuple[int, int]]:
    """The written cells of row ``y`` as (column, width), as prompt-toolkit prints them.

    Trailing unstyled blanks are never printed (prompt-toolkit's own rule), so they do not
    wrap; wide characters take two columns.
    """
    row = screen.data_buffer[y]
    used = [x for x, cell in row.items()
            if cell.char != " " or (has_style is not None and has_style[cell.style])]
    last = max(used, default=-1)
    x = 0
    while x <= last:
        width = row[x].width or 1
        yield x, width
        x += width


def _wrap(cells: Iterator[tuple[int, int]], columns: int) -> tuple[list[int], int]:
    """Which rewrapped row each cell starts on, and how many rows the line takes."""
    rows, column, starts = 0, 0, []
    for _, width in cells:
        if column + width > columns and column > 0:
            rows, column = rows + 1, 0
        starts.append(rows)
        column += width
    return starts, rows + 1


def cursor_row_after_reflow(screen: Screen, cursor_x: int, cursor_y: int, columns: int,
                            has_style: Mapping[str, bool] | None = None) -> int:
    """Rows from the frame's first row to the cursor once a terminal rewraps to ``columns``."""
    columns = max(columns, 1)
    above = 0
    for y in range(cursor_y):
        above += _wrap(_cells(screen, y, has_style), columns)[1]
    cells = list(_cells(screen, cursor_y, has_style))
    starts, rows = _wrap(iter(cells), columns)
    for (x, width), row in zip(cells, starts, strict=True):
        if x <= cursor_x < x + width:
            return above + row
    return above + rows - 1  # past the last written cell: the terminal keeps it at the end


# Clear from the cursor down without "erase below" at the screen's top-left: tmux (its
# scroll-on-clear option, on by default) moves the whole screen into the scrollback for that,
# a copy of the frame. Clear this row, then below it from the next row (the cursor saved and
# restored: on the last row the move down stays put and the clear is of this row again).
_CLEAR_BELOW = "\x1b[K\x1b7\x1b[B\x1b[J\x1b8"


def follow_reflow(renderer: Renderer) -> None:
    """Make ``renderer`` find its first row after the terminal rewrapped it to a new width.

    Before prompt-toolkit erases (on SIGWINCH) or redraws at a new width, the cursor's row
    is recounted as the terminal now holds it, the cursor goes back there and the rows from
    there down are cleared; prompt-toolkit then erases and draws from the frame's start.
    """
    from prompt_toolkit.data_structures import Point

    render, erase = renderer.render, renderer.erase

    def recount(always: bool) -> None:
        # prompt-toolkit keeps the last drawn screen and size in private fields; they are
        # the only record of what the terminal holds, and nothing public exposes them. A
        # prompt-toolkit without them leaves its own count standing (a stale copy at worst).
        screen = getattr(renderer, "_last_screen", None)
        size = getattr(renderer, "_last_size", None)
        cursor = getattr(renderer, "_cursor_pos", None)
        if screen is None or size is None or cursor is None:
            return
        columns = renderer.output.get_size().columns
        if columns != size.columns:
            has_style = getattr(renderer, "_style_string_has_style", None)
            row = cursor_row_after_reflow(screen, cursor.x, cursor.y, columns, has_style)
        elif always:
            row = cursor.y
        else:
            return
        output = renderer.output
        output.write_raw("\r")
        output.cursor_up(row)
        output.write_raw(_CLEAR_BELOW)
        renderer._cursor_pos = Point(x=0, y=0)

    def render_reflowed(*args: object, **kwargs: object) -> None:
        recount(always=False)
        render(*args, **kwargs)  # type: ignore[arg-type]

    def erase_reflowed(*args: object, **kwargs: object) -> None:
        recount(always=True)
        erase(*args, **kwargs)  # type: ignore[arg-type]

    renderer.render = render_reflowed  # type: ignore[method-assign]
    renderer.erase = erase_reflowed  # type: ignore[method-assign]
