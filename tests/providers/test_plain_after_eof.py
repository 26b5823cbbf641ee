"""Plain mode after its input has ended: a new question fails at once, printing nothing."""

from __future__ import annotations

import asyncio
import io

from dsh_cli.interaction import (
    ASK_ABORTED,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.providers.plain import PlainProvider


def test_a_question_after_stdin_closed_fails_silently():
    output = io.StringIO()
    provider = PlainProvider(io.StringIO(""), output)
    request = AskUserQuestionRequest.model_validate(
        {"questions": [{"id": "db", "question": "Which database?",
                        "options": [{"label": "SQLite"}]}]})


    async def first_then_second() -> tuple[list[str], str, str]:
        ui = UserInteraction()
        ui.register_provider(provider)
        try:
            await ui.ask(request)
        except UserInteractionError:
            pass
        after_first = output.getvalue()
        try:
            await ui.ask(request)
        except UserInteractionError as error:
            return [error.code], after_first, output.getvalue()
        raise AssertionError("the second ask did not fail")

    codes, after_first, after_second = asyncio.run(first_then_second())
    assert codes == [ASK_ABORTED]
    assert "Which database?" in after_first  # the first found out the input had ended
    assert after_second == after_first  # the second printed nothing at all
