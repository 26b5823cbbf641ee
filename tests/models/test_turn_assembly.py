"""Assembling a turn from chunk deltas, including the ways servers differ."""

from __future__ import annotations

from typing import Any

from dsh_cli.models.base import ReasoningDelta, TextDelta, Usage
from dsh_cli.models.turn_assembly import TurnAssembler


def chunk(finish=None, usage=None, **delta) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": usage}


def call(index=None, id=None, name=None, arguments=None) -> dict[str, Any]:
    fragment: dict[str, Any] = {"function": {"name": name, "arguments": arguments}}
    if index is not None:
        fragment["index"] = index
    if id is not None:
        fragment["id"] = id
    return fragment


def test_text_and_reasoning_pass_through_in_order():
    turn = TurnAssembler()
    assert turn.feed(chunk(role="assistant", content="")) == []
    assert turn.feed(chunk(reasoning_content="hmm")) == [ReasoningDelta("hmm")]
    assert turn.feed(chunk(reasoning="more")) == [ReasoningDelta("more")]
    assert turn.feed(chunk(content="Hi")) == [TextDelta("Hi")]
    turn.feed(chunk(finish="stop"))
    turn.feed({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})
    done = turn.completion()
    assert (done.content, done.reasoning, done.usage) == ("Hi", "hmmmore", Usage(3, 4))
    assert turn.finish_reason == "stop"


def test_interleaved_calls_are_assembled_by_index():
    turn = TurnAssembler()
    turn.feed(chunk(tool_calls=[call(1, "b", "second", ""), call(0, "a", "first", "")]))
    turn.feed(chunk(tool_calls=[call(0, arguments='{"x"'), call(1, arguments="{}")]))
    turn.feed(chunk(tool_calls=[call(0, arguments=": 1}")]))
    calls = turn.completion().tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("a", "first", '{"x": 1}'), ("b", "second", "{}")]


def test_calls_without_an_index_continue_until_a_new_id():
    turn = TurnAssembler()
    turn.feed(chunk(tool_calls=[call(id="a", name="f", arguments="{")]))
    turn.feed(chunk(tool_calls=[call(arguments="}")]))
    turn.feed(chunk(tool_calls=[call(id="a", arguments="")]))
    turn.feed(chunk(tool_calls=[call(id="b", name="g", arguments="[]")]))
    calls = turn.completion().tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("a", "f", "{}"), ("b", "g", "[]")]


def test_a_name_sent_again_is_not_doubled_and_a_missing_id_is_made_up():
    turn = TurnAssembler()
    turn.feed(chunk(tool_calls=[call(0, None, "ask_user_question", "{")]))
    turn.feed(chunk(tool_calls=[call(0, None, "ask_user_question", "}")]))
    (only,) = turn.completion().tool_calls
    assert only.name == "ask_user_question" and only.arguments == "{}"
    assert only.id.startswith("call_") and len(only.id) > 10


def test_arguments_sent_as_an_object_are_kept_as_json_text():
    turn = TurnAssembler()
    turn.feed(chunk(tool_calls=[call(0, "a", "ask_user_question", {"questions": []})]))
    turn.feed(chunk(finish="tool_calls"))
    (done,) = turn.completion().tool_calls
    assert done.arguments == '{"questions": []}'
