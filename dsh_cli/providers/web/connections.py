"""The connections every web server of dsh takes (``dsh web``, ``--web``, ``dsh attach
--web``, ``dsh mcp --http``): bounded in time and in number, whoever opens them.

uvicorn's h11 protocol, with what uvicorn leaves open: its keep-alive timer runs only
between requests, and any byte restarts it, so a client that sends half a request and
waits held its connection (and a descriptor) forever.

- A request's head and body must be in within ``request_seconds()`` of the moment the
  connection could start it (its opening, or the end of the previous response); past it the
  connection is closed. A response that takes long (an event stream, a long poll) is not
  cut: the clock stops once the request is read.
- At most ``CONNECTIONS_PER_CLIENT`` connections of one client address and
  ``CONNECTIONS`` in all (or half the process's descriptor limit, when that is lower): a
  connection past either closes the oldest one of that client (of all) still waiting for a
  request; with none waiting, the new one is closed at once. So a flood of half-sent
  requests gives way to the human's request instead of filling the descriptor table.
- The listening socket's backlog is ``BACKLOG``: asyncio accepts up to that many
  connections in one go before any of them is counted, so the cap keeps room for that
  below the descriptor limit.
- An ``accept()`` that fails for want of descriptors (asyncio logs a traceback each time,
  through a blocking write to stderr) is one ``dsh:`` line at most every
  ``ACCEPT_REPORT_SECONDS``, through the server's non-blocking ``say``; the traceback asyncio
  writes when its retry finds the server stopped meanwhile is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
from collections.abc import Callable
from functools import cache
from typing import Any

from dsh_cli.core.limits import (
    WEB_CONNECTIONS,
    WEB_CONNECTIONS_PER_CLIENT,
    WEB_REQUEST_SECONDS,
)
from dsh_cli.core.lines import notice
from dsh_cli.core.tuning import seconds_from_env

__all__ = ["ACCEPT_REPORT_SECONDS", "BACKLOG", "AcceptErrors", "connection_cap", "guarded_h11",
           "request_seconds"]

ACCEPT_REPORT_SECONDS = 60.0  # at most one line about failing accepts in this long
ACCEPT_FAILED = "socket.accept() out of system resource"
# asyncio's retry of a failed accept, run after the server closed its socket
RETRY_AFTER_STOP = "Exception in callback BaseSelectorEventLoop._start_serving"
BACKLOG = 32  # connections the kernel queues, and asyncio accepts in one go


def request_seconds() -> float:
    """How long a request may take to come whole: ``WEB_REQUEST_SECONDS``, or
    ``DSH_WEB_REQUEST_SECONDS``."""
    return seconds_from_env("DSH_WEB_REQUEST_SECONDS", WEB_REQUEST_SECONDS)


def connection_cap(limit: int = WEB_CONNECTIONS) -> int:
    """``limit``, or half the soft descriptor limit less two accept bursts, when lower (the
    connections a cap closes give their descriptors back a turn of the loop later)."""
    with contextlib.suppress(OSError, ValueError):
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY:
            return max(1, min(limit, soft // 2 - 2 * BACKLOG))
    return limit


@cache
def guarded_h11() -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class with the bounds above (built on first use)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting_states = (h11.IDLE, h11.SEND_BODY)  # the client still owes its request
    allowed = request_seconds()

    class GuardedH11(H11Protocol):
        request_seconds = allowed
        per_client = WEB_CONNECTIONS_PER_CLIENT

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.opened = self.loop.time()
            self._deadline: asyncio.TimerHandle | None = None
            self._arm()
            self._make_room()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # the next request's clock

        @property
        def waiting(self) -> bool:
            """Whether the client has yet to send (all of) a request here."""
            return self.conn.their_state in waiting_states \
                and (self.cycle is None or self.cycle.response_complete)

        def _arm(self) -> None:
            self._disarm()
            if not self.transport.is_closing():
                self._deadline = self.loop.call_later(self.request_seconds, self._late)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _late(self) -> None:
            self._deadline = None
            if self.conn.their_state in waiting_states and not self.transport.is_closing():
                self.transport.close()

        def _make_room(self) -> None:
            """Past a cap, the oldest waiting connection goes (this one, if none waits)."""
            live = [other for other in self.connections
                    if isinstance(other, GuardedH11) and not other.transport.is_closing()]
            client = self.client[0] if self.client else None
            mine = [other for other in live
                    if (other.client[0] if other.client else None) == client]
            for crowd, cap in ((mine, self.per_client), (live, connection_cap())):
                if len(crowd) <= cap:
                    continue
                idle = [other for other in crowd if other is not self and other.waiting]
                oldest = min(idle, key=lambda other: other.opened, default=self)
                oldest.transport.close()
                if oldest is self:
                    return

    return GuardedH11


class AcceptErrors:
    """A loop exception handler: failing accepts as one rate-limited line, the rest as before."""

    def __init__(self, say: Callable[[str], None],
                 previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None,
                 *, every: float = ACCEPT_REPORT_SECONDS) -> None:
        self.say = say
        self.previous = previous
        self.every = every
        self.failed = 0  # accepts failed since the last line
        self._said: float | None = None

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if message.startswith(RETRY_AFTER_STOP) \
                and isinstance(context.get("exception"), ValueError):
            return  # the retry found the listening socket closed: the server has stopped
        if message != ACCEPT_FAILED:
            if self.previous is not None:
                self.previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        self.failed += 1
        now = loop.time()
        if self._said is not None and now - self._said < self.every:
            return
        error = context.get("exception")
        why = getattr(error, "strerror", None) or str(error)
        self.say(notice(f"cannot take a connection: {why} ({self.failed} refused; "
                        f"said at most every {self.every:g} s)") + "\n")
        self._said, self.failed = now, 0
