"""The offline demo model asks a realistic batch, then reflects exactly what came back."""

from __future__ import annotations

import asyncio
import json

from dsh_cli.models.demo import DemoModel
from dsh_cli.tools import AskUserQuestionTool
from dsh_cli.tools.ask_user_question import decode_questions

TOOLS = [AskUserQuestionTool().spec()]


def final(messages, tools=TOOLS):
    async def run():
        return [item async for item in DemoModel().stream(messages, tools)][-1]

    return asyncio.run(run())


def after(result):
    return final([{"role": "user", "content": "make me an app"},
                  {"role": "assistant", "content": ""},
                  {"role": "tool", "tool_call_id": "demo_1", "content": json.dumps(result)}])


def test_first_turn_asks_single_multi_and_free_text_questions():
    completion = final([{"role": "user", "content": "hi"}])
    (call,) = completion.tool_calls
    questions = decode_questions(call.arguments)
    single, multi, free = questions
    assert not single.multi_select and single.labels[0].endswith("(Recommended)")
    assert multi.multi_select and all(o.description for o in multi.options)
    assert not free.options


def test_it_says_first_that_it_is_a_scripted_demo_asking_whatever_was_typed():
    for typed in ("hi", "what is 2+2"):
        text = final([{"role": "user", "content": typed}]).content
        assert text.startswith("I am dsh's offline demo, a scripted model: whatever you type, "
                               "I ask these same three questions")


def test_summary_reflects_selected_custom_and_skipped():
    text = after({"answers": [{"id": "stack", "selected": [], "custom": "Rust + axum"},
                              {"id": "features", "selected": ["Auth", "CI"]},
                              {"id": "name", "selected": []}]}).content
    assert "Stack: Rust + axum (your own answer)" in text
    assert "Features: Auth, CI" in text
    assert "Name: skipped" in text
    assert "make me an app" in text


def test_refusals_are_explained_by_code():
    for code, phrase in [("ASK_CANCELLED", "dismissed"), ("NO_PROVIDER", "NO_PROVIDER"),
                         ("ASK_TIMEOUT", "timed out"), ("ASK_ABORTED", "interrupted")]:
        text = after({"error": {"name": "UserInteractionError", "code": code, "message": "m"}})
        assert phrase in text.content


def test_without_the_tool_it_does_not_ask():
    completion = final([{"role": "user", "content": "hi"}], tools=[])
    assert not completion.tool_calls and "--no-ask" in completion.content
