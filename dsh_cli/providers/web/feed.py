"""The event feed: every event of ``ui.events`` fanned out to each connected browser.

A browser that (re)connects first gets the pending batches and permission requests again,
with their original ``rpc_id``s, then the transcript so far, then a ``replay/done`` marker
listing what is still pending, so a page that missed a ``question/resolved`` or a
``permission/resolved`` while away can drop it.

Pending permission requests are replayed from what the feed itself saw on the stream
(announced, not yet resolved) rather than from a table: the gate announces a request a
moment before its provider holds it, and a browser connecting in that moment must still
see it.
Each event carries its ``shown`` object (``shown.py``): the text the page shows of it.
When the host closes, every stream ends with ``host/closed``, so the page says it is done
instead of reconnecting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from dsh_cli.core.events import Event
from dsh_cli.core.limits import WEB_HISTORY_EVENTS as HISTORY_LIMIT
from dsh_cli.interaction import PendingQuestions
from dsh_cli.providers.web.shown import PageText

__all__ = ["HOST_CLOSED", "REPLAY_DONE", "EventFeed"]

REPLAY_DONE = "replay/done"
# the last event of every stream: the host is done, so the page stops reconnecting
HOST_CLOSED = "host/closed"
# Question and permission events are not history: a pending one is replayed from its table
# instead, and a settled one must not come back on reload.
_NOT_HISTORY = {"question/requested", "question/resolved", "response/ack",
                "permission/requested", "permission/resolved"}
_DELTAS = {"assistant/delta", "assistant/reasoning"}


class EventFeed:
    """Subscribes to one event stream; each browser connection gets its own queue."""

    def __init__(self, pending: PendingQuestions) -> None:
        self.pending = pending
        self.asked: dict[str, dict[str, Any]] = {}  # permission/requested, until resolved
        self.history: list[dict[str, Any]] = []
        self._clients: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._closed = False
        self.text = PageText()  # each event's ``shown``: the page only renders

    def attach(self, subscribe: Callable[[Callable[[Event], None]], Callable[[], None]]
               ) -> Callable[[], None]:
        """Subscribe to an event stream; returns the unsubscriber."""
        return subscribe(self.publish)

    def publish(self, event: Event | dict[str, Any]) -> None:
        """Send one event to every connected browser and remember transcript events."""
        data = self.dress(event.to_json() if isinstance(event, Event) else dict(event))
        self._remember(data)
        for queue in self._clients:
            queue.put_nowait(data)

    def dress(self, data: dict[str, Any]) -> dict[str, Any]:
        """The event with its ``shown`` words (a question's with its last answers)."""
        last: dict[str, list[str]] | None = None
        if data.get("type") == "question/requested":  # looked up as the batch registered
            entry = self.pending.get(str(data.get("rpc_id")))
            last = entry.context.last_answers if entry is not None else None
        return self.text.add(data, last)

    def replay(self) -> list[dict[str, Any]]:
        """What a browser that (re)connects gets first: everything still pending."""
        replay = [self.dress(event.to_json()) for event in self.pending.replay()]
        replay.extend(self.asked.values())
        return replay

    def _remember(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind == "permission/requested":
            self.asked[data["rpc_id"]] = data
        elif kind == "permission/resolved":
            self.asked.pop(data["rpc_id"], None)
        if kind in _NOT_HISTORY:
            return
        if kind == "assistant/message":
            # the full message supersedes the streamed pieces that built it
            self.history = [item for item in self.history if item.get("type") not in _DELTAS]
        self.history.append(data)
        if len(self.history) > HISTORY_LIMIT:
            del self.history[: len(self.history) - HISTORY_LIMIT]

    def show_messages(self, messages: list[dict[str, Any]]) -> None:
        """Put an earlier conversation (a resumed session) at the top of the transcript."""
        from dsh_cli.core.conversation import conversation_events  # `ask --web` has none

        self.history[:0] = [self.text.add(event.to_json())
                            for event in conversation_events(messages)]

    def connect(self) -> asyncio.Queue[dict[str, Any] | None]:
        """A new browser connection: replay first, then live events (no gap, no repeat)."""
        queue = self._queue()
        replay = self.replay()
        for item in replay:
            queue.put_nowait(item)
        for item in self.history:
            queue.put_nowait(item)
        queue.put_nowait(self._replay_done(queue, [item["rpc_id"] for item in replay]))
        if self._closed:
            queue.put_nowait({"type": HOST_CLOSED})
            queue.put_nowait(None)
        else:
            self._clients.add(queue)
        return queue

    def _queue(self) -> asyncio.Queue[dict[str, Any] | None]:
        """A new connection's queue."""
        return asyncio.Queue()

    def _replay_done(self, queue: asyncio.Queue[dict[str, Any] | None], pending: list[str]
                     ) -> dict[str, Any]:
        """The ``replay/done`` marker a new connection gets."""
        return {"type": REPLAY_DONE, "pending": pending}

    def disconnect(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        self._clients.discard(queue)

    @property
    def connections(self) -> int:
        return len(self._clients)

    def close(self, told: bool = True) -> None:
        """End every open stream, with ``host/closed`` when ``told`` (the server can then shut
        down at once); untold, a page reconnects and hears why from the answer."""
        self._closed = True
        for queue in self._clients:
            if told:
                queue.put_nowait({"type": HOST_CLOSED})
            queue.put_nowait(None)
        self._clients.clear()

