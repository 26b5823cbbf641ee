"""The one event stream every surface subscribes to (renderer, relay, store).

Events are plain dataclasses whose ``type`` and JSON shape are those of the JSON-lines
protocol (``spec/relay.md``), so the relay writes them as they are and no surface
re-derives what happened. This module imports nothing from dsh.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

__all__ = [
    "AssistantDelta",
    "AssistantMessage",
    "ErrorEvent",
    "Event",
    "EventStream",
    "QuestionRequested",
    "QuestionResolved",
    "ReasoningDelta",
    "ResponseAck",
    "SessionStarted",
    "ToolResultEvent",
    "ToolStarted",
    "TurnCompleted",
    "UserMessage",
]


@dataclass(frozen=True)
class Event:
    """Base of every event; ``type`` is the relay's event type."""

    type: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        """The relay's JSON object for this event."""
        return {"type": self.type, **asdict(self)}


@dataclass(frozen=True)
class SessionStarted(Event):
    type: ClassVar[str] = "session/started"
    session_id: str
    model: str


@dataclass(frozen=True)
class UserMessage(Event):
    """A user message entered the conversation (not a relay event; the store wants it)."""

    type: ClassVar[str] = "user/message"
    content: str


@dataclass(frozen=True)
class AssistantDelta(Event):
    type: ClassVar[str] = "assistant/delta"
    text: str


@dataclass(frozen=True)
class ReasoningDelta(Event):
    """Reasoning text of a reasoning model: shown dimmed, never sent back to the API."""

    type: ClassVar[str] = "assistant/reasoning"
    text: str


@dataclass(frozen=True)
class AssistantMessage(Event):
    type: ClassVar[str] = "assistant/message"
    content: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ToolStarted(Event):
    type: ClassVar[str] = "tool/started"
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolResultEvent(Event):
    type: ClassVar[str] = "tool/result"
    call_id: str
    name: str
    content: str
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class QuestionRequested(Event):
    type: ClassVar[str] = "question/requested"
    rpc_id: str
    session_id: str | None
    call_id: str | None
    questions: list[dict[str, Any]]


@dataclass(frozen=True)
class QuestionResolved(Event):
    """A batch settled; ``outcome`` is answered, cancelled, aborted or timeout."""

    type: ClassVar[str] = "question/resolved"
    rpc_id: str
    outcome: str
    answer: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "rpc_id": self.rpc_id, "outcome": self.outcome}
        if self.answer is not None:
            data["answer"] = self.answer
        return data


@dataclass(frozen=True)
class TurnCompleted(Event):
    type: ClassVar[str] = "turn/completed"
    session_id: str | None


Listener = Callable[[Event], None]


class EventStream:
    """Synchronous fan-out: listeners run in subscription order, as each event happens."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns a function that removes it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)


@dataclass(frozen=True)
class ResponseAck(Event):
    """The host's reply to a controller's response; ``reason`` only when refused."""

    type: ClassVar[str] = "response/ack"
    rpc_id: str
    accepted: bool
    reason: str | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "rpc_id": self.rpc_id, "accepted": self.accepted}
        if not self.accepted:
            data["reason"] = self.reason
            data["message"] = self.message
        return data


@dataclass(frozen=True)
class ErrorEvent(Event):
    """A protocol-level problem, e.g. ``BAD_FRAME``; the process carries on."""

    type: ClassVar[str] = "error"
    code: str
    message: str
