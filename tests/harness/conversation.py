"""What the model requires of a stored conversation, shared by the store and e2e tests."""

from __future__ import annotations

from typing import Any


def assert_well_formed(messages: list[dict[str, Any]]) -> None:
    """Each assistant tool call is followed, in order, by exactly one result; no stray ones."""
    index = 0
    while index < len(messages):
        message = messages[index]
        assert message["role"] in ("system", "user", "assistant", "tool"), message
        assert message["role"] != "system" or index == 0, "system prompt only first"
        assert message["role"] != "tool", f"tool result without a call at {index}"
        index += 1
        calls = message.get("tool_calls") or []
        for call in calls:
            assert call["type"] == "function" and set(call) == {"id", "type", "function"}
            assert set(call["function"]) == {"name", "arguments"}
            assert isinstance(call["function"]["arguments"], str)
            assert index < len(messages), f"no result for tool call {call['id']}"
            result = messages[index]
            assert result["role"] == "tool" and result["tool_call_id"] == call["id"], (
                f"expected the result of {call['id']} at {index}, got {result}")
            assert isinstance(result["content"], str)
            index += 1
