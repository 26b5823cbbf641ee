"""The one event stream every surface subscribes to (renderer, relay, store).

Events are small immutable records whose ``type`` and JSON shape are those of the JSON-lines
protocol (``spec/relay.md``), so the relay writes them as they are and no surface
re-derives what happened. This module imports nothing from dsh (a batch's ``Outcome`` is
only named in an annotation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # the annotation only: the stream itself needs nothing of dsh
    from dsh_cli.core.outcomes import Outcome

__all__ = [
    "BAD_RESPONSE",
    "NOT_PENDING",
    "WRONG_SESSION",
    "AssistantDelta",
    "AssistantMessage",
    "ErrorEvent",
    "Event",
    "EventStream",
    "PermissionRequested",
    "PermissionResolved",
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


class Event:
    """Base of every event: an immutable record; ``type`` is the relay's event type.

    Fields are the subclass's annotations (``ClassVar`` ones excepted), in order, with
    class attributes as defaults. A hand-rolled record rather than ``dataclass``: building
    fourteen dataclasses cost 6 ms on every start of dsh.
    """

    type: ClassVar[str] = "event"
    _fields: ClassVar[tuple[str, ...]] = ()
    _unshown: ClassVar[tuple[str, ...]] = ()  # fields a repr (a log, a traceback) leaves out

    def __init_subclass__(cls) -> None:
        notes = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (no inspect import)
        own = [name for name, note in notes.items() if "ClassVar" not in str(note)]
        cls._fields = (*cls._fields, *own)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._fields
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes {len(names)} fields")
        values = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name not in names or name in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated {name!r}")
            values[name] = value
        for name in names:
            if name not in values:
                if not hasattr(type(self), name):
                    raise TypeError(f"{type(self).__name__}: missing {name!r}")
                default = getattr(type(self), name)
                values[name] = list(default) if isinstance(default, list) else default
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # equal by value, and fields may be lists

    def __repr__(self) -> str:
        pairs = zip(self._fields, self._values(), strict=True)
        fields = ", ".join(f"{name}={'...' if name in self._unshown and value else repr(value)}"
                           for name, value in pairs)
        return f"{type(self).__name__}({fields})"

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def to_json(self) -> dict[str, Any]:
        """The relay's JSON object for this event."""
        return {"type": self.type, **dict(zip(self._fields, self._values(), strict=True))}


class SessionStarted(Event):
    type: ClassVar[str] = "session/started"
    session_id: str
    model: str


class UserMessage(Event):
    """A user message entered the conversation (not a relay event; the store wants it)."""

    type: ClassVar[str] = "user/message"
    content: str
    # the async batch whose answer this message carries: the store forgets the batch with it
    ticket: str | None = None


class AssistantDelta(Event):
    type: ClassVar[str] = "assistant/delta"
    text: str


class ReasoningDelta(Event):
    """Reasoning text of a reasoning model: shown dimmed, never sent back to the API."""

    type: ClassVar[str] = "assistant/reasoning"
    text: str


class AssistantMessage(Event):
    type: ClassVar[str] = "assistant/message"
    content: str
    tool_calls: list[dict[str, Any]] = []  # noqa: RUF012 (copied per event)


class ToolStarted(Event):
    type: ClassVar[str] = "tool/started"
    call_id: str
    name: str
    arguments: str


class ToolResultEvent(Event):
    type: ClassVar[str] = "tool/result"
    call_id: str
    name: str
    content: str
    error: dict[str, Any] | None = None


class QuestionRequested(Event):
    type: ClassVar[str] = "question/requested"
    _unshown: ClassVar[tuple[str, ...]] = ("continuation",)
    rpc_id: str
    session_id: str | None
    call_id: str | None
    questions: list[dict[str, Any]]
    source: dict[str, Any] | None = None
    declinable: bool = False
    review: bool = False
    # what the asker needs to carry on after a resume (an MCP call's requestState); the
    # store keeps it with the batch, no surface shows it
    continuation: dict[str, Any] | None = None
    # "async": the asking tool call has returned a ticket; the answer arrives as a message
    delivery: str = "wait"

    def to_json(self) -> dict[str, Any]:
        """The fields of asks from inside dsh only when set, so a model's batch reads as ever."""
        data = super().to_json()
        data.pop("continuation", None)
        for name, unset in (("source", None), ("declinable", False), ("review", False),
                            ("delivery", "wait")):
            if data.get(name) == unset:
                data.pop(name, None)
        return data


class QuestionResolved(Event):
    """A batch settled; ``outcome`` says how (``core/outcomes.py``), its ``event`` word on
    the wire."""

    type: ClassVar[str] = "question/resolved"
    rpc_id: str
    outcome: Outcome
    answer: dict[str, Any] | None = None
    # who gave the answer (terminal, plain, web, desk, answers file, controller, ...): the
    # store keeps it
    answered_by: str | None = None
    # the error code of a batch that ended without an answer (the store keeps it too)
    code: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "rpc_id": self.rpc_id,
                                "outcome": self.outcome.event}
        if self.answer is not None:
            data["answer"] = self.answer
        return data  # answered_by stays off the wire: relay.md fixes the frame's fields


class PermissionRequested(Event):
    """A tool call waits for the human's permission (``spec/permissions.md``)."""

    type: ClassVar[str] = "permission/requested"
    rpc_id: str
    session_id: str | None
    call_id: str | None
    tool: str
    server: str | None
    arguments: Any
    hints: dict[str, bool]
    description: str | None = None  # the tool's own, as its server gave it (untrusted)

    def to_json(self) -> dict[str, Any]:
        """``description`` only when the tool has one, so other requests read as ever."""
        data = super().to_json()
        if data.get("description") is None:
            data.pop("description", None)
        return data


class PermissionResolved(Event):
    """A permission request settled: ``decision`` (allow_once ... deny), or ``outcome`` of a
    request that ended without one (cancelled, aborted, timeout)."""

    type: ClassVar[str] = "permission/resolved"
    rpc_id: str
    outcome: str
    decision: str | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "rpc_id": self.rpc_id, "outcome": self.outcome}
        if self.decision is not None:
            data["decision"] = self.decision
        if self.message is not None:
            data["message"] = self.message
        return data


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


# why a controller's response was refused (``ResponseAck.reason``)
NOT_PENDING = "not-pending"
BAD_RESPONSE = "bad-response"
WRONG_SESSION = "wrong-session"


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


class ErrorEvent(Event):
    """A protocol-level problem, e.g. ``BAD_FRAME``; the process carries on."""

    type: ClassVar[str] = "error"
    code: str
    message: str
