"""The recorder: which write each event of a session's stream becomes.

``SessionStore.record`` subscribes ``recorder(store, session_id)`` to the loop's event
stream: each message, question batch and permission request and decision is written as it
happens, one transaction per event, so whatever the model saw is on disk before its next
call and a killed process loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from dsh_cli.core.conversation import message_of
from dsh_cli.core.events import (
    Event,
    PermissionRequested,
    PermissionResolved,
    QuestionRequested,
    QuestionResolved,
    UserMessage,
)

__all__ = ["Recorded", "recorder"]


class Recorded(Protocol):
    """What the recorder writes to: the store's parts, and the sessions it no longer records."""

    frozen: set[str]  # sessions marked interrupted: their dying turn is not recorded

    def append_message(self, session_id: str, message: dict[str, Any], *,
                       ticket: str | None = None) -> None: ...

    def question_requested(self, session_id: str, event: QuestionRequested) -> None: ...

    def question_resolved(self, session_id: str, event: QuestionResolved) -> None: ...

    def permission_requested(self, session_id: str, event: PermissionRequested) -> None: ...

    def permission_resolved(self, event: PermissionResolved) -> None: ...


def recorder(store: Recorded, session_id: str) -> Callable[[Event], None]:
    """The listener that writes ``session_id``'s events to ``store`` as they are emitted."""

    def listener(event: Event) -> None:
        if session_id in store.frozen:
            return
        message = message_of(event)  # the very message the loop keeps for it
        if message is not None:
            ticket = event.ticket if isinstance(event, UserMessage) else None
            store.append_message(session_id, message, ticket=ticket)
        elif isinstance(event, QuestionRequested):
            store.question_requested(session_id, event)
        elif isinstance(event, QuestionResolved):
            store.question_resolved(session_id, event)
        elif isinstance(event, PermissionRequested):
            store.permission_requested(session_id, event)
        elif isinstance(event, PermissionResolved):
            store.permission_resolved(event)

    return listener
