"""A ``LineWindow`` leaves the terminal as a plain prompt-toolkit window does, frame by frame,
and its ``LineRenderer`` draws a frame that changes some lines by writing those rows only."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pyte
from prompt_toolkit.renderer import Renderer

from dsh_cli.desk.line_window import LineControl, LineWindow, draw_changed_lines

COLUMNS, ROWS = 40, 8
FRAMES = [  # each a list of (style, text) lines, drawn one after the other
    [("class:a", "a header"), ("", "語語語語語 five wide characters"), ("", "short")],
    [("class:a", "a header"), ("", "x"), ("class:b", "語語語語語 now here, reversed")],
    [("", "a line far longer than the forty columns of the window, clipped")],
    [("", "escape \x1b[31m and a bell \x07 shown as carets"), ("", "é combining é"),
     ("class:b", "")],
    [("", "語" * 25), ("", "two"), ("", "three"), ("", "four")],
    [("", "語" * 3)],
]
_HEAD, _ONE, _TWO, _HELP = ("class:a", "inbox · 4"), ("", "  one"), ("", "  two 語語"), ("", "help")
_THREE = ("", "  three, a longer line")
MOVES = [  # a cursor moving in a list: the same lines (the same objects) where nothing moved
    [_HEAD, ("class:b", "❯ one"), _TWO, _THREE, _HELP],
    [_HEAD, _ONE, ("class:b", "❯ two 語語"), _THREE, _HELP],
    [_HEAD, _ONE, _TWO, ("class:b", "❯ three"), _HELP],  # shorter than the row was
    [("class:a", "inbox · 4 · 1 taken"), _ONE, _TWO, ("class:b", "❯ three"), _HELP],
    [("class:a", "inbox · 4 · 1 taken"), _ONE, _TWO, ("class:b", "❯ three"), _HELP],  # same
    [_HEAD, ("", "a line far longer than the forty columns of the window, clipped"),
     ("", "語" * 25), ("class:b", "❯ three"), _HELP],  # as wide as the screen
    [_HEAD, _ONE, _TWO, ("class:b", "❯ three"), ("", "help, 2 more")],  # the last line
    [_HEAD, ("class:b", "❯ é combining é"), _TWO, _THREE, ("", "help, 2 more")],
    [_HEAD, ("", "escape \x1b[31m shown as a caret"), ("", "x"), _THREE],  # one line fewer
    [_HEAD, ("", "escape \x1b[31m shown as a caret"), ("class:b", "x"), _THREE],
    # a row with an escape and a bell written by the changed rows' path: shown, not run
    [_HEAD, ("class:b", "❯ escape \x1b[31m and a bell \x07"), ("", "x"), _THREE],
]
WHOLE = {0, 6, 8}  # the frames MOVES draws whole: the first, the last line's, a line fewer


def _screens(window: str, frames: list[list[tuple[str, str]]] = FRAMES,
             whole: tuple[Any, list[int]] | None = None) -> list[str]:
    """The terminal after each of ``frames``, drawn by ``window`` ("lines", with the
    ``LineRenderer``, or "plain"); with ``whole`` (pytest's monkeypatch, a list) the list
    gets the number of each frame prompt-toolkit's renderer drew whole."""
    from prompt_toolkit.application import Application, create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window
    from prompt_toolkit.output.vt100 import Vt100_Output
    from prompt_toolkit.styles import Style

    frame = [0]
    if whole is not None:
        monkeypatch, numbers = whole
        render = Renderer.render

        def counted(self: Renderer, app: Any, layout: Any, is_done: bool = False) -> None:
            if not is_done:
                numbers.append(frame[0])
            render(self, app, layout, is_done)

        monkeypatch.setattr(Renderer, "render", counted)

    def lines() -> list[tuple[str, str]]:
        return frames[frame[0]]

    def fragments() -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for line in lines():
            out += [line, ("", "\n")]
        return out[:-1]

    written = io.StringIO()
    terminal = pyte.Screen(COLUMNS, ROWS)
    stream = pyte.Stream(terminal)
    shown: list[str] = []

    async def run() -> None:
        with create_pipe_input() as pipe:
            output = Vt100_Output(written, lambda: Size(rows=ROWS, columns=COLUMNS),
                                  term="xterm-256color", enable_cpr=False)
            with create_app_session(input=pipe, output=output):
                body = LineWindow(LineControl(lines), dont_extend_height=True) \
                    if window == "lines" else Window(FormattedTextControl(fragments),
                                                     wrap_lines=False, dont_extend_height=True)
                app: Application[None] = Application(
                    layout=Layout(body), full_screen=False, input=pipe, output=output,
                    style=Style.from_dict({"a": "bold", "b": "reverse"}))
                if window == "lines":
                    draw_changed_lines(app)
                drawn = asyncio.Event()
                app.after_render += lambda _app: drawn.set()
                task = asyncio.ensure_future(app.run_async())
                await asyncio.wait_for(drawn.wait(), 5)  # the first frame, as it starts
                for number in range(len(frames)):
                    drawn.clear()
                    frame[0] = number
                    app.invalidate()
                    await asyncio.wait_for(drawn.wait(), 5)
                    stream.feed(written.getvalue())
                    written.seek(0)
                    written.truncate()
                    shown.append("\n".join(
                        "".join(f"{cell.data}{'*' if cell.reverse else ''}"
                                f"{'!' if cell.bold else ''}"
                                for cell in (terminal.buffer[y][x] for x in range(COLUMNS)))
                        for y in range(ROWS)))
                app.exit()
                await task

    asyncio.run(run())
    return shown


def test_each_frame_leaves_the_terminal_as_a_plain_window_would():
    lines, plain = _screens("lines"), _screens("plain")
    assert len(lines) == len(FRAMES)
    for number, (got, expected) in enumerate(zip(lines, plain, strict=True)):
        assert got == expected, f"frame {number}"


def test_a_frame_that_changes_some_lines_writes_those_rows_and_leaves_what_a_whole_frame_would(
        monkeypatch):
    plain = _screens("plain", MOVES)
    whole: list[int] = []
    lines = _screens("lines", MOVES, (monkeypatch, whole))
    for number, (got, expected) in enumerate(zip(lines, plain, strict=True)):
        assert got == expected, f"frame {number}"
    # drawn whole only where more than lines changed; the rest wrote their changed rows
    assert set(whole) == WHOLE, whole
