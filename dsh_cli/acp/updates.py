"""A session's events as ACP ``session/update`` notifications, live and replayed.

Live: text as ``agent_message_chunk`` (reasoning as ``agent_thought_chunk``) as it streams,
each tool call as ``tool_call`` when it starts and ``tool_call_update`` with its status
(``completed``, or ``failed`` with dsh's ``{name, code, message}`` as ``rawOutput``) and
output when it ends. Replayed (``session/load``): the stored conversation read as events
(``core.conversation``), the user's messages as ``user_message_chunk``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from dsh_cli.acp import messages
from dsh_cli.core.conversation import conversation_events
from dsh_cli.core.events import (
    AssistantDelta,
    AssistantMessage,
    Event,
    ReasoningDelta,
    ToolResultEvent,
    ToolStarted,
    UserMessage,
)

__all__ = ["live_update", "replayed_updates", "session_update"]


def session_update(session_id: str, update: dict[str, Any]) -> dict[str, Any]:
    """The ``session/update`` notification carrying ``update``."""
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": session_id, "update": update}}


def live_update(event: Event) -> dict[str, Any] | None:
    """The update for one live event, or None for an event the client is not shown."""
    if isinstance(event, AssistantDelta):
        return messages.agent_text(event.text)
    if isinstance(event, ReasoningDelta):
        return messages.thought_text(event.text)
    return _call_update(event, status="in_progress")


def _call_update(event: Event, *, status: str) -> dict[str, Any] | None:
    if isinstance(event, ToolStarted):
        return messages.tool_call(event.call_id, event.name, _arguments(event.arguments),
                                  status=status)
    if isinstance(event, ToolResultEvent):
        return messages.tool_call_update(event.call_id,
                                         status="failed" if event.error else "completed",
                                         text=event.content, raw_output=event.error)
    return None


def replayed_updates(conversation: Sequence[object]) -> Iterator[dict[str, Any]]:
    """The updates that show a stored conversation again, oldest first."""
    for event in conversation_events(conversation):
        if isinstance(event, UserMessage):
            yield messages.user_text(event.content)
        elif isinstance(event, AssistantMessage):
            if event.content:
                yield messages.agent_text(event.content)
        else:
            update = _call_update(event, status="pending")
            if update is not None:
                yield update


def _arguments(text: str) -> Any:
    """The call's arguments as JSON when they parse (they may not: a model wrote them)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text

