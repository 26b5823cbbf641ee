"""A ``LineWindow`` leaves the terminal as a plain prompt-toolkit window does, frame by frame."""

from __future__ import annotations

import asyncio
import io

import pyte

from dsh_cli.desk.line_window import LineControl, LineWindow

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


def _screens(window: str) -> list[str]:
    """The terminal after each frame, drawn by ``window`` ("lines" or "plain")."""
    from prompt_toolkit.application import Application, create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window
    from prompt_toolkit.output.vt100 import Vt100_Output
    from prompt_toolkit.styles import Style

    frame = [0]

    def lines() -> list[tuple[str, str]]:
        return FRAMES[frame[0]]

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
                drawn = asyncio.Event()
                app.after_render += lambda _app: drawn.set()
                task = asyncio.ensure_future(app.run_async())
                for number in range(len(FRAMES)):
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
