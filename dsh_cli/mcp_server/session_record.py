"""The session one ``dsh mcp`` process records: made at the first call, every event kept.

A ``dsh mcp`` process is one stored session, created when the first call names its client
(``mcp:<client>``, with the working directory), recorded from the interaction's event
stream (each call, batch, permission request and result), and marked interrupted when a
signal ends the process, so its pending batches are not stored as aborted. A store that
fails is one stderr line: the agent still gets its answers, unrecorded.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import format_line

if TYPE_CHECKING:
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.store import SessionStore

__all__ = ["SessionRecord"]


class SessionRecord:
    """The process's session in ``store`` (None: nothing is recorded), opened on first use."""

    def __init__(self, ui: UserInteraction, store: SessionStore | None = None, *,
                 report: Callable[[str], None] | None = None) -> None:
        self.ui = ui
        self.store = store
        self.session_id: str | None = None
        self._report = report or (lambda line: None)
        self._stop_recording: Callable[[], None] | None = None

    def open(self, client: str | None) -> None:
        """The process's session, at its first call (when the client's name is known)."""
        if self.store is None or self.session_id is not None:
            return
        from dsh_cli.store import StoreError

        try:
            agent = client or "unknown"
            self.session_id = self.store.create_session(f"mcp:{agent}", agent=agent,
                                                        cwd=os.getcwd())
            self._stop_recording = self.store.record(self.ui.events, self.session_id)
        except StoreError as error:
            self._report(format_line(error.code, f"{error.message} (batches are not recorded)"))
            self.store = None
            return
        self.ui.session_id = self.session_id
        # a desk shows the last answer this agent got here to the same question
        self.ui.recall = functools.partial(self.store.last_answers,
                                           session_id=self.session_id)

    def emit(self, event: Any) -> None:
        """Put ``event`` on the stream the store records; a store failure is one line."""
        from dsh_cli.store import StoreError

        try:
            self.ui.events.emit(event)
        except StoreError as error:  # the answer still reaches the agent
            self._report(format_line(error.code, error.message))

    def mark_interrupted(self) -> None:
        """The process is ending (a signal): its pending batches are stored interrupted."""
        if self.store is None or self.session_id is None:
            return
        from dsh_cli.store import StoreError

        try:
            self.store.mark_interrupted(self.session_id)
        except StoreError as error:
            self._report(format_line(error.code, error.message))

    def close(self) -> None:
        """Stop recording (the session stays in the store)."""
        if self._stop_recording is not None:
            self._stop_recording()
            self._stop_recording = None
