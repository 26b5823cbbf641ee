"""The same question again: its last answer is the highlighted row, never sent by itself."""

from __future__ import annotations

import asyncio
import io

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from dsh_cli.interaction import (
    ASK_TIMEOUT,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.providers.terminal import TerminalProvider

ENTER = "\r"
DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"},
                  {"label": "MySQL"}]}


def batch() -> AskUserQuestionRequest:
    return AskUserQuestionRequest(questions=[AskUserQuestionItem(**DB)])


def asked(keys: str, *, timeout: float | None = None):
    """Ask DB on a pipe keyboard with SQLite as the last answer; (outcome, screen bytes)."""
    screen = io.StringIO()

    async def main():
        with create_pipe_input() as pipe, create_app_session(
                input=pipe, output=Vt100_Output(screen, lambda: Size(24, 80), term="xterm")):
            ui = UserInteraction(timeout=timeout)
            ui.recall = lambda request: {"db": ["SQLite"]}
            provider = TerminalProvider()
            ui.register_provider(provider)
            task = asyncio.ensure_future(ui.ask(batch()))
            for _ in range(300):
                if provider.screen is not None and provider.screen.app.is_running:
                    break
                await asyncio.sleep(0.01)
            highlight = provider.state.draft.highlight
            if keys:
                pipe.send_text(keys)
            try:
                return (await asyncio.wait_for(task, 10)).to_json(), highlight, screen
            except UserInteractionError as error:
                return error.code, highlight, screen

    outcome, highlight, screen = asyncio.run(main())
    return outcome, highlight, screen.getvalue()


def test_the_last_answer_is_highlighted_and_marked_and_enter_picks_it():
    outcome, highlight, drawn = asked(ENTER)
    assert highlight == 1  # SQLite, not the recommended first row
    assert "last answer" in drawn
    assert outcome == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_silence_never_submits_the_last_answer():
    outcome, highlight, drawn = asked("", timeout=0.5)
    assert highlight == 1 and "last answer" in drawn
    assert outcome == ASK_TIMEOUT


@pytest.mark.parametrize("recalled", [{}, {"db": ["Gone"]}])
def test_without_a_usable_last_answer_the_first_row_is_highlighted(recalled):
    async def main():
        with create_pipe_input() as pipe, create_app_session(
                input=pipe, output=Vt100_Output(io.StringIO(), lambda: Size(24, 80),
                                                term="xterm")):
            ui = UserInteraction()
            ui.recall = lambda request: recalled
            provider = TerminalProvider()
            ui.register_provider(provider)
            task = asyncio.ensure_future(ui.ask(batch()))
            for _ in range(300):
                if provider.screen is not None and provider.screen.app.is_running:
                    break
                await asyncio.sleep(0.01)
            highlight = provider.state.draft.highlight
            pipe.send_text(ENTER)
            return highlight, (await asyncio.wait_for(task, 10)).to_json()

    highlight, answer = asyncio.run(main())
    assert highlight == 0
    assert answer == {"answers": [{"id": "db", "selected": ["PostgreSQL (Recommended)"]}]}
