"""Issue 16: where the frame's first row is after a resize, and which terminals rewrap rows.

The pure counting is checked on prompt-toolkit ``Screen``s; the renderer hook through a
real ``TerminalProvider`` on pipe input, reading the cursor moves it writes on a resize.
"""

from __future__ import annotations

import asyncio
import io
import re

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.layout.screen import Char, Screen
from prompt_toolkit.output.vt100 import Vt100_Output

from dsh_cli.interaction import (
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.providers.terminal import TerminalProvider
from dsh_cli.providers.terminal.reflow import (
    REFLOW_SETTING,
    cursor_row_after_reflow,
    follow_reflow,
    terminal_reflows,
)


def screen(*rows: str) -> Screen:
    """A drawn screen holding ``rows`` from column 0, wide characters taking two cells."""
    drawn = Screen()
    for y, text in enumerate(rows):
        x = 0
        for char in text:
            cell = Char(char, "")
            drawn.data_buffer[y][x] = cell
            x += cell.width
    return drawn


# -- counting rewrapped rows -----------------------------------------------------------


def test_each_row_above_the_cursor_takes_its_length_over_the_new_width_rounded_up():
    drawn = screen("a" * 99, "b" * 40, "c" * 41, "", "d" * 10)
    # 99/40 -> 3 rows, 40 -> 1 (exactly full does not wrap), 41 -> 2, empty -> 1
    assert cursor_row_after_reflow(drawn, 0, 4, 40) == 3 + 1 + 2 + 1


def test_a_wider_window_or_the_same_width_keeps_one_row_per_drawn_row():
    drawn = screen("a" * 59, "b" * 59, "c")
    assert cursor_row_after_reflow(drawn, 0, 2, 100) == 2
    assert cursor_row_after_reflow(drawn, 0, 2, 60) == 2


def test_trailing_blanks_are_not_printed_so_they_do_not_wrap():
    drawn = screen("abc" + " " * 60, "x")
    assert cursor_row_after_reflow(drawn, 0, 1, 10) == 1


def test_a_wide_character_that_does_not_fit_starts_the_next_row():
    drawn = screen("a" * 9 + "界" + "b" * 9, "x")  # 20 cells; at 10 wide 界 moves down
    assert cursor_row_after_reflow(drawn, 0, 1, 10) == 3  # aaaaaaaaa | 界bbbbbbbb | b
    assert cursor_row_after_reflow(drawn, 0, 1, 11) == 2
    assert cursor_row_after_reflow(drawn, 0, 1, 20) == 1


def test_the_cursor_keeps_its_offset_in_its_own_row_and_past_the_end_sits_at_the_end():
    drawn = screen("q" * 30, " / filter text  1/3" + "z" * 41)
    assert cursor_row_after_reflow(drawn, 5, 1, 20) == 2  # offset 5: first piece of row 1
    assert cursor_row_after_reflow(drawn, 25, 1, 20) == 3  # offset 25: its second piece
    assert cursor_row_after_reflow(drawn, 90, 1, 20) == 2 + 3 - 1  # past the end: last piece


def test_the_frame_origin_stays_the_origin_at_any_width():
    drawn = screen("q" * 300, "r" * 300)
    assert cursor_row_after_reflow(drawn, 0, 0, 7) == 0


# -- which terminals rewrap ------------------------------------------------------------


@pytest.mark.parametrize(("environ", "reflows"), [
    ({"TMUX": "/tmp/tmux-0/default,1,0", "TERM": "screen"}, True),
    ({"TERM": "tmux-256color"}, True),
    ({"TERM": "xterm-256color", "VTE_VERSION": "7600"}, True),
    ({"TERM": "xterm-256color", "VTE_VERSION": "3405"}, False),  # before VTE rewrapped
    ({"TERM": "xterm-kitty"}, True),
    ({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"}, True),
    ({"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}, True),
    ({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, True),
    ({"TERM": "xterm-256color", "WT_SESSION": "b6f9"}, True),
    ({"TERM": "alacritty"}, True),
    ({"TERM": "xterm-256color"}, False),  # unknown: prompt-toolkit's own count
    ({"TERM": "linux"}, False),
    ({"TERM": "xterm", "XTERM_VERSION": "XTerm(390)", "VTE_VERSION": "7600"}, False),
    ({"TERM": "rxvt-unicode-256color", "KITTY_WINDOW_ID": "1"}, False),
    ({"TERM": "screen", "STY": "123.pts-0", "TMUX": "/tmp/t,1,0"}, False),
    ({"TERM": "tmux-256color", "STY": "123.pts-0"}, True),  # tmux inside screen: tmux draws
    ({"TERM": "xterm-256color", "TMUX": "/tmp/t,1,0"}, False),  # xterm started inside tmux
])
def test_reflow_is_detected_from_the_terminal_s_own_marks(environ, reflows):
    assert terminal_reflows(environ) is reflows


@pytest.mark.parametrize(("value", "reflows"), [("1", True), ("yes", True), ("on", True),
                                                ("0", False), ("no", False), ("off", False)])
def test_the_setting_forces_either_way(value, reflows):
    assert terminal_reflows({REFLOW_SETTING: value, "TERM": "linux"}) is reflows
    assert terminal_reflows({REFLOW_SETTING: value, "TMUX": "t", "TERM": "tmux"}) is reflows


# -- the renderer on a resize ----------------------------------------------------------

QUESTION = "Which deployment strategy should we use for the production rollout this week?"
OPTIONS = ["blue-green: run two identical environments and switch traffic at once",
           "canary: send a small share of traffic to the new version first and widen it"]


def resize_output(reflow: str, monkeypatch) -> str:
    """The bytes a 100-column frame with the filter open writes when the width drops to 40."""
    monkeypatch.setenv(REFLOW_SETTING, reflow)
    size = {"now": Size(rows=30, columns=100)}
    stream = io.StringIO()

    async def main() -> str:
        output = Vt100_Output(stream, lambda: size["now"], term="xterm")
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
            ui = UserInteraction()
            provider = TerminalProvider()
            ui.register_provider(provider)
            options = [{"label": label} for label in OPTIONS]
            task = asyncio.ensure_future(ui.ask(AskUserQuestionRequest(questions=[
                AskUserQuestionItem(id="q", question=QUESTION, options=options)])))
            for _ in range(300):
                if provider.screen is not None and provider.screen.app.is_running:
                    break
                await asyncio.sleep(0.01)
            pipe.send_text("/can")  # the cursor now sits in the filter line, row 1
            for _ in range(300):
                if "/ can" in "".join(t for _, t in provider.screen._fragments()):
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            app = provider.screen.app
            assert app.renderer._cursor_pos.y == 1
            start = len(stream.getvalue())
            size["now"] = Size(rows=30, columns=40)
            app._on_resize()  # what SIGWINCH runs
            written = stream.getvalue()[start:]
            pipe.send_text("\x03")
            with pytest.raises(UserInteractionError):
                await asyncio.wait_for(task, 5)
            return written

    return asyncio.run(main())


def test_on_a_reflowing_terminal_the_erase_climbs_the_rewrapped_question(monkeypatch):
    written = resize_output("1", monkeypatch)
    # the 80-column question row is two rows at 40 columns: up two, not one; then a clear
    # that is never "erase below" at the top-left (tmux would scroll the screen away)
    assert written.startswith("\r\x1b[2A\x1b[K\x1b7\x1b[B\x1b[J\x1b8"), repr(written)


def test_elsewhere_the_erase_climbs_the_rows_as_drawn(monkeypatch):
    written = resize_output("0", monkeypatch)
    assert re.match(r"(\x1b\[\?[0-9]+[hl])*\x1b\[\d+D\x1b\[1?A\x1b\[0?J", written), repr(written)


def test_a_renderer_without_the_private_record_keeps_its_own_count():
    """A prompt-toolkit that renamed the fields reflow.py reads still draws and erases:
    nothing is recounted, nothing is written, the calls go through."""
    calls: list[str] = []

    class Renderer:
        output = Vt100_Output(io.StringIO(), lambda: Size(rows=10, columns=20), term="xterm")

        def render(self, *args: object, **kwargs: object) -> None:
            calls.append("render")

        def erase(self, *args: object, **kwargs: object) -> None:
            calls.append("erase")

    renderer = Renderer()
    follow_reflow(renderer)  # type: ignore[arg-type]
    renderer.render()
    renderer.erase()
    assert calls == ["render", "erase"]
    assert renderer.output.stdout.getvalue() == ""  # type: ignore[attr-defined]
