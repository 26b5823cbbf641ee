"""``ScriptedProvider``: a test double that plugs into the real seam."""

from __future__ import annotations

import asyncio

import pytest

from dsh_cli.interaction import (
    ASK_CANCELLED,
    INVALID_ANSWER,
    NO_PROVIDER,
    ScriptedProvider,
    UserInteraction,
    UserInteractionError,
)

NAME = {"id": "name", "question": "Project name?"}


def custom(text):
    return {"answers": [{"id": "name", "selected": [], "custom": text}]}


def test_replies_are_used_in_order_and_requests_recorded(run, request_of):
    async def main():
        ui = UserInteraction()
        provider = ScriptedProvider([custom("one")])
        provider.enqueue(custom("two"))
        ui.register_provider(provider)
        first = await ui.ask(request_of(NAME))
        second = await ui.ask(request_of(NAME))
        with pytest.raises(UserInteractionError) as caught:
            await ui.ask(request_of(NAME))
        assert caught.value.code == NO_PROVIDER
        assert len(provider.requests) == 3
        return first.answers[0].custom, second.answers[0].custom

    assert run(main()) == ("one", "two")


def test_a_function_computes_replies_and_an_exception_is_raised(run, request_of):
    async def main():
        ui = UserInteraction()
        ui.register_provider(ScriptedProvider([
            lambda request: custom(request.questions[0].question.upper()),
            UserInteractionError("the user cancelled the questions", ASK_CANCELLED),
            custom("  "),
        ]))
        answer = await ui.ask(request_of(NAME))
        codes = []
        for _ in range(2):
            with pytest.raises(UserInteractionError) as caught:
                await ui.ask(request_of(NAME))
            codes.append(caught.value.code)
        return answer.answers[0].custom, codes

    assert run(main()) == ("PROJECT NAME?", [ASK_CANCELLED, INVALID_ANSWER])


def test_a_scripted_provider_with_delay_can_be_aborted(run, request_of):
    async def main():
        ui = UserInteraction(timeout=0.02)
        provider = ScriptedProvider([custom("late")], delay=10)
        ui.register_provider(provider)
        with pytest.raises(UserInteractionError):
            await ui.ask(request_of(NAME))
        await asyncio.sleep(0)
        assert provider.cancelled == provider.requests

    run(main())
