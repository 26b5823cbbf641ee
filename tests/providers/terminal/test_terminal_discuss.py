"""``ctrl-t`` discuss: offered only where a conversation goes on (``dsh chat``)."""

from __future__ import annotations

import asyncio

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction, UserInteractionError
from dsh_cli.providers.terminal import TerminalProvider
from dsh_cli.providers.terminal.render import render
from dsh_cli.sources import DOORS

CTRL_T = "\x14"
BATCH = {"questions": [{"id": "db", "question": "Which database?",
                        "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}


def ask(keys: str, *, discuss: bool, batch: dict = BATCH) -> tuple[object, str]:
    """Ask ``batch`` on pipe input typed ``keys``; (the answer or error, the hint line)."""
    async def main():
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            ui = UserInteraction()
            provider = TerminalProvider(discuss=discuss)
            ui.register_provider(provider)
            task = asyncio.ensure_future(ui.ask(AskUserQuestionRequest.model_validate(batch)))
            while provider.screen is None or not provider.screen.app.is_running:
                await asyncio.sleep(0.01)
            hint = render(provider.state, 100, 20)[-1]
            pipe.send_text(keys)
            try:
                return await asyncio.wait_for(task, 5), "".join(text for _, text in hint)
            except UserInteractionError as error:
                return error, "".join(text for _, text in hint)
    return asyncio.run(main())


def test_ctrl_t_leaves_the_batch_with_ask_discuss_where_a_conversation_goes_on():
    error, hint = ask(CTRL_T, discuss=True)
    assert "ctrl-t discuss" in hint
    assert isinstance(error, UserInteractionError) and error.code == "ASK_DISCUSS"
    assert error.message == ("the user wants to discuss these questions before answering; "
                             "wait for their message")


def test_without_a_conversation_ctrl_t_does_nothing_and_is_not_offered():
    answer, hint = ask(CTRL_T + "2", discuss=False)
    assert "discuss" not in hint
    assert answer.to_json() == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_a_servers_form_is_never_left_to_discuss():
    form = {**BATCH, "source": {"name": "deploy"}}
    answer, hint = ask(CTRL_T + "1", discuss=True, batch=form)
    assert "discuss" not in hint
    assert answer.to_json() == {"answers": [{"id": "db", "selected": ["PostgreSQL"]}]}


@pytest.mark.parametrize("door", sorted(DOORS))
def test_only_the_chat_door_converses(door):
    # dsh ask, dsh run (and the desk, which builds its own provider) never offer discuss
    assert DOORS[door].converses is (door == "chat")
