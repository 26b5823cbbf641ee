"""The door of ``dsh mcp --http``: the token, and a cap on live sessions.

An ASGI gate in front of the SDK's Streamable HTTP app. A request gets in with the token as
the first path segment (``/TOKEN/mcp``) or as ``Authorization: Bearer TOKEN`` on ``/mcp``;
the token is compared in constant time, the scheme matched case-insensitively (RFC 9110),
and a trailing slash is the same path (Starlette would answer it with a redirect to a URL
without the token). The gate counts the sessions the app opens; when a new one would be
one too many, the session idle the longest is closed first (an ordinary ``DELETE``), so
a client that never closes its sessions cannot grow dsh without bound. A session that
``holds`` work (a question still open, an outcome not yet fetched) is never closed so: its
agent comes back for it. With every session busy or holding work, a new one is refused
(503), and the sessions that hold work keep it. Whether a session holds work is a count its
stores keep, so an admission's cost does not grow with the tasks and tickets kept.
"""

from __future__ import annotations

import asyncio
import hmac
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from dsh_cli.core.limits import HTTP_SESSIONS as MAX_SESSIONS

__all__ = ["MAX_SESSIONS", "TokenGate"]

SESSION_HEADER = b"mcp-session-id"

Scope = dict[str, Any]


class TokenGate:
    """ASGI app: ``app`` behind the token, with at most ``max_sessions`` live sessions."""

    def __init__(self, app: Any, token: str, *, path: str, host: str,
                 max_sessions: int = MAX_SESSIONS,
                 holds: Callable[[str], bool] | None = None) -> None:
        self.app = app
        self.token = token.encode()
        self.path = path
        self.host = host.encode()  # the Host a request of the gate's own must carry
        self.max_sessions = max_sessions
        self.holds = holds or (lambda session: False)  # whether a session has work kept
        # session id -> requests in flight, the least recently used first
        self.sessions: OrderedDict[bytes, int] = OrderedDict()
        self._admitting = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        inner = self.authorised_path(scope.get("path", ""), headers.get(b"authorization", b""))
        if inner is None:
            await _forbidden(send)
            return
        scope = {**scope, "path": inner, "raw_path": inner.encode()}
        session = headers.get(SESSION_HEADER)
        if session is not None:
            await self._use(session, scope, receive, send)
        elif scope.get("method") == "POST":  # only a POST (of ``initialize``) opens one
            await self._open(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def authorised_path(self, url_path: str, authorization: bytes) -> str | None:
        """The app's path for a request with the token, else None."""
        url_path = url_path.rstrip("/") or "/"
        first, _, rest = url_path[1:].partition("/")
        # both comparisons always run: neither the path nor the header tells how much matched
        in_path = hmac.compare_digest(first.encode("utf-8", "replace"), self.token)
        scheme, _, credentials = authorization.partition(b" ")
        in_header = hmac.compare_digest(credentials.strip(), self.token)
        if in_path and f"/{rest}" == self.path:
            return self.path
        if in_header and scheme.lower() == b"bearer" and url_path == self.path:
            return self.path
        return None

    async def _open(self, scope: Scope, receive: Any, send: Any) -> None:
        """A request without a session id: it may open a session, so room is made first."""
        async with self._admitting:
            if len(self.sessions) >= self.max_sessions:  # full: look for one to close
                # at most ``max_sessions`` looks, each a count (``holds`` scans nothing)
                idle = next((key for key, busy in self.sessions.items()
                             if not busy and not self.holds(key.decode("latin-1"))), None)
                if idle is None:
                    await _unavailable(send)
                    return
                await self._close(idle)
        opened: list[bytes] = []

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened.extend(value for key, value in message.get("headers", [])
                              if key.lower() == SESSION_HEADER)
                for key in opened:
                    self.sessions[key] = self.sessions.get(key, 0) + 1
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            for key in opened:
                self._done(key)

    async def _use(self, session: bytes, scope: Scope, receive: Any, send: Any) -> None:
        """A request of a session: in flight until it ends; a session the app ended is let go."""
        known = session in self.sessions
        if known:
            self.sessions[session] += 1
            self.sessions.move_to_end(session)
        status: list[int] = []

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if known:
                self._done(session)
            ended = status and (status[0] == 404 or (scope.get("method") == "DELETE"
                                                     and status[0] < 400))
            if ended:
                self.sessions.pop(session, None)

    def _done(self, session: bytes) -> None:
        if session in self.sessions:
            self.sessions[session] -= 1

    async def _close(self, session: bytes) -> None:
        """End ``session`` as its client would, with a ``DELETE`` through the app."""
        self.sessions.pop(session, None)
        scope: Scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                        "method": "DELETE", "scheme": "http", "path": self.path,
                        "raw_path": self.path.encode(), "query_string": b"", "root_path": "",
                        "headers": [(b"host", self.host), (SESSION_HEADER, session)],
                        "client": ("127.0.0.1", 0), "server": None}

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: dict[str, Any]) -> None:
            return None

        await self.app(scope, receive, discard)


async def _forbidden(send: Any) -> None:
    await _plain(send, 403, b"forbidden\n")


async def _unavailable(send: Any) -> None:
    await _plain(send, 503, b"too many sessions in use\n")


async def _plain(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})
