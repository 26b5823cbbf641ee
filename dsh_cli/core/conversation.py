"""A conversation's messages read in one place: as events, as tool calls, as what is pending.

A conversation is a list of OpenAI chat-format messages (``role``, ``content``,
``tool_calls``, ``tool_call_id``): what the model is sent and what the store keeps.
``conversation_events`` turns it back into the events of ``core.events`` that a live
session emits, so replay, the web feed and ``dsh sessions show`` show one reading of it;
``message_of`` is the inverse, the one message the loop keeps and the store writes for
an event. Stored conversations may be old or hand-edited: a message that is not a mapping
is skipped, a field of the wrong type is read as text, and no reader here raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from dsh_cli.core.events import (
    AssistantMessage,
    Event,
    ToolResultEvent,
    ToolStarted,
    UserMessage,
)

__all__ = [
    "Message",
    "ToolCall",
    "answered_call_ids",
    "assistant_message",
    "conversation_events",
    "message_of",
    "pending_tool_calls",
    "text_of",
    "tool_calls_by_id",
    "tool_calls_of",
]

Message = dict[str, Any]
# The roles a transcript shows; the system prompt is configuration, not conversation.
_SHOWN = ("user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant message; ``arguments`` is raw JSON text as written."""

    id: str
    name: str
    arguments: str

    def to_json(self) -> dict[str, str]:
        """The entry of an ``assistant/message`` event's ``tool_calls``."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


def text_of(content: object) -> str:
    """A message's content as text: None is empty, text parts are joined, other JSON dumped."""
    if isinstance(content, list):  # OpenAI content parts: [{"type": "text", "text": ...}]
        parts = [part.get("text") if isinstance(part, dict) else part for part in content]
        texts = [part for part in parts if isinstance(part, str)]
        if len(texts) == len(parts):
            return "".join(texts)
    return _field(content)


def _field(value: object) -> str:
    """An id, name or arguments field as text (arguments are JSON text, as the model wrote)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return json.dumps(value, ensure_ascii=False, default=str)


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _call_id(message: Message) -> str:
    return _field(message.get("tool_call_id"))


def _tool_call(entry: object) -> ToolCall | None:
    if not isinstance(entry, dict):
        return None
    function = entry.get("function")
    if not isinstance(function, dict):
        function = {}
    return ToolCall(id=_field(entry.get("id")), name=_field(function.get("name")),
                    arguments=_field(function.get("arguments")))


def tool_calls_of(message: object) -> list[ToolCall]:
    """The tool calls of one message; entries that are not mappings are left out."""
    if not isinstance(message, dict):
        return []
    entries = message.get("tool_calls")
    if not isinstance(entries, list):
        return []
    return [call for call in map(_tool_call, entries) if call is not None]


def tool_calls_by_id(messages: Sequence[object]) -> dict[str, ToolCall]:
    """Every tool call of the conversation by its id (a repeated id: the first call wins)."""
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if _role(message) == "assistant":
            for call in tool_calls_of(message):
                calls.setdefault(call.id, call)
    return calls


def answered_call_ids(messages: Sequence[object]) -> set[str]:
    """The ids of the tool calls that have a result."""
    return {_call_id(m) for m in messages if isinstance(m, dict) and m.get("role") == "tool"}


def pending_tool_calls(messages: Sequence[object]) -> list[ToolCall]:
    """Tool calls of the last assistant message that have no result yet (resume)."""
    answered: set[str] = set()
    for message in reversed(messages):
        role = _role(message)
        if role == "tool" and isinstance(message, dict):
            answered.add(_call_id(message))
        elif role == "assistant":
            return [call for call in tool_calls_of(message) if call.id not in answered]
        else:
            return []
    return []


def conversation_events(messages: Sequence[object], *, last: int | None = None
                        ) -> Iterator[Event]:
    """The events a live session emitted for these messages, in the order it emitted them.

    A user message; an assistant message, then for each of its calls a ``ToolStarted``
    followed by its result. A result is named after its call (``""`` when no call has its
    id) and carries the error its content holds; a call still open when the next message
    (or the end) comes is started without a result, as when the process died during it.
    ``last`` keeps only the last so many user, assistant and tool messages; a result still
    finds its call's name before that window.
    """
    shown = [m for m in messages if isinstance(m, dict) and m.get("role") in _SHOWN]
    calls = tool_calls_by_id(shown)
    if last is not None:
        shown = shown[-last:] if last > 0 else []
    open_calls: list[ToolCall] = []  # of the last assistant message, not yet started
    for message in shown:
        role, content = message["role"], text_of(message.get("content"))
        if role == "tool":
            call_id = _call_id(message)
            ids = [call.id for call in open_calls]
            # a live session runs the calls in order: those before this one started first
            upto = ids.index(call_id) + 1 if call_id in ids else 0
            yield from map(_started, open_calls[:upto])
            del open_calls[:upto]
            origin = calls.get(call_id)
            name = origin.name if origin else ""
            yield ToolResultEvent(call_id, name, content, _error_of(content))
            continue
        yield from map(_started, open_calls)
        open_calls = tool_calls_of(message) if role == "assistant" else []
        if role == "user":
            yield UserMessage(content)
        else:
            yield AssistantMessage(content, [call.to_json() for call in open_calls])
    yield from map(_started, open_calls)


def _started(call: ToolCall) -> ToolStarted:
    return ToolStarted(call.id, call.name, call.arguments)


def _error_of(content: str) -> dict[str, Any] | None:
    """The ``error`` object of a stored tool result, if it is one (as ``ToolResult.failure``)."""
    try:
        error = json.loads(content).get("error")
    except (AttributeError, ValueError, RecursionError):  # RecursionError: "[[[[…" text
        return None
    return error if isinstance(error, dict) else None


def assistant_message(event: AssistantMessage) -> Message:
    """The OpenAI-format message kept for an assistant message event."""
    message: Message = {"role": "assistant", "content": event.content}
    if event.tool_calls:
        message["tool_calls"] = [_entry(call["id"], call["name"], call["arguments"])
                                 for call in event.tool_calls]
    return message


def _entry(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@overload
def message_of(event: UserMessage | AssistantMessage | ToolResultEvent) -> Message: ...
@overload
def message_of(event: Event) -> Message | None: ...
def message_of(event: Event) -> Message | None:
    """The message an event adds to the conversation, or None for one that adds none."""
    if isinstance(event, UserMessage):
        return {"role": "user", "content": event.content}
    if isinstance(event, AssistantMessage):
        return assistant_message(event)
    if isinstance(event, ToolResultEvent):
        return {"role": "tool", "tool_call_id": event.call_id, "content": event.content}
    return None
