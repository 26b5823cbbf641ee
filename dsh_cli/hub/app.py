"""The serving hub's web app: agents' ``/mcp`` behind their tokens, and the routes given.

``/mcp`` is the same MCP server ``dsh mcp`` builds (``mcp_server/server.py``: every tool
and task shape), its questions and permission requests kept in the hub's store
(``asker.py``). ``AgentGate`` lets a request in only with an agent's token
(``Authorization: Bearer``; none, a human's or an unknown one: 401, each checked the same
way); binds each MCP session to the token that opened it (another token naming it: 404, as
a session that does not exist); and reads who asks from the request's ``X-Dsh-Agent``,
``X-Dsh-Machine`` and ``X-Dsh-Cwd`` headers (percent-encoded UTF-8, each cut to one safe
line), falling back to the MCP client's name, the peer's address and "". Tickets and tasks
belong to the agent token, not the MCP session: an agent that reconnects (to another
session, or another hub process behind the same balancer for the same process's work)
keeps its work; it ends with the question's own end, or the hub's. Other routes (desks,
history) are the caller's (``extra_routes``).
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from dsh_cli.core.limits import (
    AGENT_CWD_CHARACTERS,
    AGENT_MACHINE_CHARACTERS,
    HUB_SESSIONS,
    HUB_SESSIONS_PER_AGENT,
)
from dsh_cli.core.limits import AGENT_NAME_CHARACTERS as MAX_AGENT_NAME
from dsh_cli.core.sanitize import one_line
from dsh_cli.hub.asker import HubAsks, HubPermissions, HubProvider, HubTickets
from dsh_cli.hub.context import holder
from dsh_cli.hub.tasks import HubTasks

if TYPE_CHECKING:
    from mcp.server import Server

    from dsh_cli.hub.context import HubContext
    from dsh_cli.mcp_server.server import Caller
    from dsh_cli.mcp_server.service import AskService

__all__ = ["ASKER", "AgentGate", "Asker", "HubAgents", "agents_side", "create_app"]

MCP_PATH = "/mcp"
ASKER = "dsh.hub.asker"  # the ASGI scope's key for who makes the request
SESSION_HEADER = b"mcp-session-id"
# sessions remembered with their token: the SDK's live ones, and as many again that ended
# without the gate seeing it (its idle timeout); past it the oldest is forgotten, and a
# request naming it is refused as a session that ended (its client opens a new one)
BOUND_SESSIONS = 2 * HUB_SESSIONS
UNAUTHORISED = (b"an agent token is needed: Authorization: Bearer <the token of "
                b"`dsh hub token add NAME --agent`>\n")
NO_SESSION = b"no such session\n"

Scope = dict[str, Any]


@dataclass(frozen=True)
class Asker:
    """Who makes a request: the agent token's name, and what the agent says of itself."""

    token: str
    agent: str | None  # None: the MCP client's name stands
    machine: str
    cwd: str

    def caller(self, client: str | None) -> Caller:
        """The request's caller as the MCP server labels its batches and owns its work."""
        from dsh_cli.mcp_server.server import Caller

        source = {"client": self.agent or client or "", "machine": self.machine,
                  "cwd": self.cwd, "token": self.token}
        return Caller(source=source, owner=f"agent:{self.token}")


def _said(headers: dict[bytes, bytes], name: bytes, limit: int) -> str | None:
    """A percent-encoded UTF-8 header as one safe line; None when absent or empty."""
    raw = headers.get(name)
    if raw is None:
        return None
    text = one_line(unquote(raw.decode("latin-1"), errors="replace"), limit)
    return text or None


def asker_of(token: str, headers: dict[bytes, bytes], peer: Any) -> Asker:
    """Who asks, from the X-Dsh-* headers, else the peer's address and ""."""
    host = peer[0] if isinstance(peer, (tuple, list)) and peer else ""
    return Asker(token=token,
                 agent=_said(headers, b"x-dsh-agent", MAX_AGENT_NAME),
                 machine=_said(headers, b"x-dsh-machine", AGENT_MACHINE_CHARACTERS)
                 or str(host),
                 cwd=_said(headers, b"x-dsh-cwd", AGENT_CWD_CHARACTERS) or "")


def caller_of(ctx: Any, client: str | None) -> Caller | None:
    """The caller of an MCP request through the gate (``mcp_server.server.CallerOf``)."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    asker = scope.get(ASKER) if isinstance(scope, dict) else None
    return asker.caller(client) if isinstance(asker, Asker) else None


class AgentGate:
    """ASGI: ``app``'s ``/mcp`` only with an agent token, each session its opener's; an
    agent opening more than ``per_agent`` sessions has its oldest ended (``DELETE``), so
    one agent cannot take every session of the hub from the others."""

    def __init__(self, app: Any, hub: HubContext, *, bound: int = BOUND_SESSIONS,
                 per_agent: int = HUB_SESSIONS_PER_AGENT) -> None:
        self.app = app
        self.hub = hub
        self.bound = bound
        self.per_agent = per_agent
        self.sessions: OrderedDict[bytes, str] = OrderedDict()  # session id -> token name
        self._of: dict[str, OrderedDict[bytes, None]] = {}  # token name -> its sessions
        self._ending: set[asyncio.Task[None]] = set()  # held until done

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or (scope.get("path", "").rstrip("/") or "/") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        token = await holder(self.hub, {"authorization": headers.get(
            b"authorization", b"").decode("latin-1")})
        if token is None or token.kind != "agent":
            await _plain(send, 401, UNAUTHORISED, [(b"www-authenticate", b"Bearer")])
            return
        session = headers.get(SESSION_HEADER)
        if session is not None and self.sessions.get(session) != token.name:
            await _plain(send, 404, NO_SESSION)  # another's, or ended: the same to the asker
            return
        if session is not None:
            self.sessions.move_to_end(session)
        scope = {**scope, "path": MCP_PATH, "raw_path": MCP_PATH.encode(),
                 ASKER: asker_of(token.name, headers, scope.get("client"))}
        status: list[int] = []

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                if session is None and message["status"] < 400:
                    for key, value in message.get("headers", []):
                        if key.lower() == SESSION_HEADER:
                            self._bind(value, token.name)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            ended = status and (status[0] == 404 or (scope.get("method") == "DELETE"
                                                     and status[0] < 400))
            if session is not None and ended:
                self._forget(session)

    def _bind(self, session: bytes, token: str) -> None:
        self.sessions[session] = token
        self.sessions.move_to_end(session)
        mine = self._of.setdefault(token, OrderedDict())
        mine[session] = None
        while len(self.sessions) > self.bound:
            self._forget(next(iter(self.sessions)))
        while len(mine) > self.per_agent:
            oldest = next(iter(mine))
            self._forget(oldest)
            task = asyncio.ensure_future(_end_session(self.app, oldest))
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)

    def _forget(self, session: bytes) -> None:
        token = self.sessions.pop(session, None)
        if token is None or token not in self._of:
            return
        self._of[token].pop(session, None)
        if not self._of[token]:
            del self._of[token]


async def _end_session(app: Any, session: bytes) -> None:
    """End ``session`` as its client would, with a ``DELETE`` through the app."""
    scope: Scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                    "method": "DELETE", "scheme": "http", "path": MCP_PATH,
                    "raw_path": MCP_PATH.encode(), "query_string": b"", "root_path": "",
                    "headers": [(b"host", b"hub"), (SESSION_HEADER, session)],
                    "client": ("127.0.0.1", 0), "server": None}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def discard(message: dict[str, Any]) -> None:
        return None

    await app(scope, receive, discard)


async def _plain(send: Any, status: int, body: bytes,
                 extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"cache-control", b"no-store"),
                            *extra]})
    await send({"type": "http.response.body", "body": body})


@dataclass
class HubAgents:
    """The agents' side of one hub process: its MCP server and what its calls wait on."""

    server: Server[Any]
    service: AskService
    asks: HubAsks

    async def close(self) -> None:
        """End every call's wait: open async batches, then any entry still kept, withdrawn."""
        await self.service.tickets.close()
        await self.asks.close()


def agents_side(hub: HubContext, *, question_timeout: float | None = None) -> HubAgents:
    """``dsh mcp``'s server, its questions and permission requests kept in ``hub``'s store.

    The permission gate has no rules and no saved approvals: every request is asked at a
    desk; "for this session" and "always" hold for this hub process, for the same agent
    token, client, tool, input and working directory (``approve.py``'s grant)."""
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.mcp_server.approve import ApproveService
    from dsh_cli.mcp_server.server import build_server
    from dsh_cli.mcp_server.service import AskService
    from dsh_cli.permissions import PermissionGate

    # the timeout is the entries' deadline, kept by the store (timed out by its sweep, on
    # one clock for every hub process), not a timer of this process's
    ui = UserInteraction()
    # an agent's ticket asked at another hub process (one that died) is read from the store
    service = AskService(ui, tickets=HubTickets(hub))
    asks = HubAsks(hub, service.sources)
    ui.register_provider(HubProvider(asks, ui, timeout=question_timeout))
    gate = PermissionGate(events=ui.events, notice=hub.report)
    gate.register_provider(HubPermissions(asks, timeout=question_timeout))
    # an agent's MCP task made at another hub process (one that died) too
    server = build_server(service, ApproveService(gate, service), caller_of=caller_of,
                          tasks=functools.partial(HubTasks, hub))
    return HubAgents(server, service, asks)


def create_app(hub: HubContext, agents: HubAgents, *, extra_routes: Sequence[Any] = ()) -> Any:
    """The hub's ASGI app: ``/mcp`` for agents behind ``AgentGate``, and ``extra_routes``."""
    from mcp.server.transport_security import TransportSecuritySettings

    # every request carries an agent's token, which a browser lured by DNS rebinding has
    # not; the hub is reached by whatever name its proxy or balancer gives it
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = agents.server.streamable_http_app(
        streamable_http_path=MCP_PATH, transport_security=security,
        max_sessions=HUB_SESSIONS, custom_starlette_routes=list(extra_routes))
    return AgentGate(app, hub)
