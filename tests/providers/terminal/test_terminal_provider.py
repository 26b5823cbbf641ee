"""The provider on prompt-toolkit pipe input, asked through a real ``UserInteraction``."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Callable

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output

from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import (
    AbortSignal,
    AskContext,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.providers.terminal import TerminalProvider

UP, DOWN, RIGHT, LEFT = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D"
ESC, CTRL_C, CTRL_S, ENTER, TAB = "\x1b", "\x03", "\x13", "\r", "\t"


def request(*questions: dict, signal: AbortSignal | None = None) -> AskUserQuestionRequest:
    return AskUserQuestionRequest(questions=[AskUserQuestionItem(**q) for q in questions],
                                  signal=signal)


def q(qid: str, *labels: str, multi: bool = False, **extra) -> dict:
    options = [{"label": label} for label in labels] or None
    return {"id": qid, "question": f"{qid}?", "options": options, "multi_select": multi, **extra}


async def until(condition: Callable[[], bool], timeout: float = 3.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


def shown(provider: TerminalProvider, qid: str) -> Callable[[], bool]:
    """The batch whose first question is ``qid`` is on screen and taking keys."""
    def check() -> bool:
        screen = provider.screen
        return (screen is not None and screen.app.is_running and provider.state is not None
                and provider.state.questions[0].id == qid)
    return check


def run(coroutine_function, output=None):
    """Run with a pipe as the keyboard; the coroutine gets the pipe and a fresh seam."""
    async def main():
        with create_pipe_input() as pipe, create_app_session(
                input=pipe, output=output or DummyOutput()):
            ui = UserInteraction()
            provider = TerminalProvider()
            ui.register_provider(provider)
            return await asyncio.wait_for(coroutine_function(pipe, ui, provider), 10)
    return asyncio.run(main())


def answer_with(keys: list[str], *questions: dict) -> dict:
    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(*questions)))
        await until(shown(provider, questions[0]["id"]))
        for key in keys:
            pipe.send_text(key)
            await asyncio.sleep(0.01)
        return (await task).to_json()
    return run(go)


def test_single_select_by_digit_arrows_space_and_enter():
    assert answer_with(["2"], q("db", "A", "B")) == {"answers": [{"id": "db", "selected": ["B"]}]}
    assert answer_with([DOWN, ENTER], q("db", "A", "B"))["answers"][0]["selected"] == ["B"]
    assert answer_with([UP, UP, " "], q("db", "A", "B"))["answers"][0]["selected"] == ["B"]


def test_multi_select_toggles_and_confirms_after_the_at_least_one_hint():
    keys = [ENTER, "1", "3", UP, " ", " ", ENTER]
    result = answer_with(keys, q("f", "Auth", "Billing", "Admin", multi=True))
    assert result == {"answers": [{"id": "f", "selected": ["Auth", "Admin"]}]}


def test_other_field_takes_digits_as_text_and_overrides_choices():
    # the first enter warns that the text replaces the ticked option, the second uses it
    keys = ["1", TAB, "4", "2", "o", "s", LEFT, LEFT, "x", ENTER, ENTER]
    result = answer_with(keys, q("f", "Auth", "Billing", multi=True))
    assert result == {"answers": [{"id": "f", "selected": [], "custom": "42xos"}]}


def test_optionless_question_and_skip():
    result = answer_with(["acme", ENTER, "s", ENTER], q("name"), q("db", "A"))
    assert result["answers"][0] == {"id": "name", "selected": [], "custom": "acme"}
    assert result["answers"][1] == {"id": "db", "selected": []}


def test_batch_back_navigation_keeps_drafts_then_review_submits():
    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(q("a", "X", "Y"), q("b"), q("c", "P"))))
        await until(shown(provider, "a"))
        for key in ["1", "draft", UP]:  # a answered; b gets a draft and is left with up
            pipe.send_text(key)
            await asyncio.sleep(0.02)
        assert provider.state.index == 0
        pipe.send_text(RIGHT)
        await until(lambda: provider.state.index == 1)
        assert provider.state.draft.text == "draft"
        for key in [ENTER, "1"]:
            pipe.send_text(key)
            await asyncio.sleep(0.02)
        await until(lambda: provider.state.screen == "review")
        pipe.send_text(ENTER)
        return (await task).to_json()

    assert run(go) == {"answers": [{"id": "a", "selected": ["X"]},
                                   {"id": "b", "selected": [], "custom": "draft"},
                                   {"id": "c", "selected": ["P"]}]}


@pytest.mark.parametrize("keys", [[ESC], [CTRL_C], [TAB, CTRL_C]])
def test_esc_and_ctrl_c_cancel_the_batch_and_leave_a_summary(keys):
    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(q("a", "X"), q("b"))))
        await until(shown(provider, "a"))
        for key in keys:
            pipe.send_text(key)
            await asyncio.sleep(0.02)
        with pytest.raises(UserInteractionError) as error:
            await task
        assert provider.screen.ending_line == "✗ questions cancelled"
        assert not provider.screen.app.is_running
        return error.value.code
    assert run(go) == "ASK_CANCELLED"


def test_queued_requests_are_shown_one_at_a_time():
    async def go(pipe, ui, provider):
        first = asyncio.ensure_future(ui.ask(request(q("a", "X", "Y"))))
        second = asyncio.ensure_future(ui.ask(request(q("b", "P", "Q"))))
        await until(shown(provider, "a"))
        await asyncio.sleep(0.05)
        assert provider.state.questions[0].id == "a" and not second.done()
        pipe.send_text("1")
        await until(shown(provider, "b"))
        pipe.send_text("2")
        return [(await first).to_json(), (await second).to_json()]
    assert run(go) == [{"answers": [{"id": "a", "selected": ["X"]}]},
                       {"answers": [{"id": "b", "selected": ["Q"]}]}]


def test_abort_while_shown_closes_the_ui_and_raises_aborted():
    async def go(pipe, ui, provider):
        signal = AbortSignal()
        task = asyncio.ensure_future(ui.ask(request(q("a", "X"), signal=signal)))
        await until(shown(provider, "a"))
        signal.abort("turn cancelled")
        with pytest.raises(UserInteractionError) as error:
            await task
        assert not provider.screen.app.is_running
        assert provider.screen.ending_line == "✗ questions aborted"
        return error.value.code
    assert run(go) == "ASK_ABORTED"


def test_timeout_shows_a_countdown_and_times_out():
    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(q("a", "X")), timeout=1.5))
        await until(shown(provider, "a"))
        assert re.match(r"⏱ [12]s left", provider.screen._countdown())
        with pytest.raises(UserInteractionError) as error:
            await task
        assert provider.screen.ending_line == "✗ questions timed out"
        return error.value.code
    assert run(go) == "ASK_TIMEOUT"


def test_any_key_stops_the_countdown():
    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(q("a", "X", "Y")), timeout=0.3))
        await until(shown(provider, "a"))
        pipe.send_text(DOWN)
        await until(lambda: provider.screen._countdown() is None)
        await asyncio.sleep(0.5)  # past the timeout: still waiting for the human
        assert not task.done()
        pipe.send_text(ENTER)
        return (await task).to_json()
    assert run(go) == {"answers": [{"id": "a", "selected": ["Y"]}]}


def test_closed_input_is_aborted():
    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(q("a", "X"))))
        await until(shown(provider, "a"))
        pipe.close()
        with pytest.raises(UserInteractionError) as error:
            await task
        return error.value.code, error.value.message
    assert run(go) == ("ASK_ABORTED", "input closed")


def capture_output() -> tuple[io.StringIO, Vt100_Output]:
    buffer = io.StringIO()
    return buffer, Vt100_Output(buffer, lambda: Size(rows=24, columns=60), term="xterm")


def test_hostile_text_never_reaches_the_terminal_and_summary_stays():
    buffer, output = capture_output()
    hostile = "Pick\x1b]0;PWNED\x07 \u202eone\x1b[2J\x9b5n"

    async def go():
        with create_pipe_input() as pipe:
            provider = TerminalProvider(input=pipe, output=output)
            pipe.send_text("1")
            return await provider.ask(AskContext(
                request(q("a", f"opt{hostile}", header=hostile, detail=hostile)), "q_1"))
    answer = asyncio.run(go())
    written = buffer.getvalue()
    for bad in ("PWNED", "\u202e", "\x1b[2J", "\x9b", "]0;"):
        assert bad not in written
    assert "✓ Pick one: opt" in written
    assert answer.answers[0].selected == [f"opt{hostile}"]  # returned unchanged


def test_thousand_options_through_the_application():
    options = [AskUserQuestionOption(label=f"option {i}") for i in range(1000)]
    item = AskUserQuestionItem(id="x", question="Pick", options=options)

    async def go():
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            provider = TerminalProvider()
            pipe.send_text(UP + UP + UP + ENTER)
            return await provider.ask(AskContext(AskUserQuestionRequest(questions=[item]), "q_1"))
    assert asyncio.run(go()).answers[0].selected == ["option 998"]


def test_no_color_uses_one_bit_color_depth(monkeypatch):
    from prompt_toolkit.output import ColorDepth

    monkeypatch.setenv("NO_COLOR", "1")

    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(q("a", "X"))))
        await until(shown(provider, "a"))
        depth = provider.screen.app.color_depth
        pipe.send_text("1")
        await task
        return depth
    assert run(go) == ColorDepth.DEPTH_1_BIT


def test_the_terminals_cursor_position_reply_reaches_prompt_toolkit_not_the_answer(monkeypatch):
    from prompt_toolkit.renderer import CPR_Support

    monkeypatch.delenv("PROMPT_TOOLKIT_NO_CPR", raising=False)

    class Screen(io.StringIO):
        def isatty(self) -> bool:  # a terminal: prompt-toolkit asks it for the cursor
            return True

    buffer = Screen()
    output = Vt100_Output(buffer, lambda: Size(rows=24, columns=60), term="xterm",
                          enable_cpr=True)

    async def go(pipe, ui, provider):
        task = asyncio.ensure_future(ui.ask(request(q("db", "PostgreSQL", "SQLite"))))
        await until(shown(provider, "db"))
        await until(lambda: "\x1b[6n" in buffer.getvalue())  # where is the cursor?
        pipe.send_text("\x1b[5;1R")  # the terminal's reply
        await until(lambda: provider.screen.app.renderer.cpr_support == CPR_Support.SUPPORTED)
        pipe.send_text("2")
        return (await task).to_json()

    assert run(go, output) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


@pytest.mark.parametrize(("keys", "provider_fields", "declinable", "ending"), [
    ([ESC], {}, False, Outcome.CANCELLED),
    (["\x04"], {}, True, Outcome.DECLINED),
    (["\x14"], {"discuss": True}, False, Outcome.DISCUSSED),
    (["\x04"], {"desk": True}, False, Outcome.ABORTED),  # the desk handed it back
    (["2"], {}, False, Outcome.ANSWERED),
])
def test_every_way_the_ui_ends_is_one_outcome_and_the_ask_ends_with_it(
        keys, provider_fields, declinable, ending):
    """The question state ends with one ``Outcome``; the ask returns the answer or raises
    that outcome's code, whatever key ended it."""
    async def main():
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            ui = UserInteraction()
            provider = TerminalProvider(**provider_fields)
            ui.register_provider(provider)
            asked = AskUserQuestionRequest(questions=[AskUserQuestionItem(**q("db", "A", "B"))],
                                           declinable=declinable)
            task = asyncio.ensure_future(ui.ask(asked))
            await asyncio.wait_for(until(shown(provider, "db")), 10)
            for key in keys:
                pipe.send_text(key)
            try:
                result: object = await asyncio.wait_for(task, 10)
            except UserInteractionError as error:
                result = error.code
            return provider.state.ending, result

    ended, result = asyncio.run(main())
    assert ended is ending
    if ending is Outcome.ANSWERED:
        assert result.to_json() == {"answers": [{"id": "db", "selected": ["B"]}]}
    else:
        assert result == ending.code
