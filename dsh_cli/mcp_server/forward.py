"""``dsh mcp --hub URL``: a stdio MCP server that forwards every message to a hub's ``/mcp``.

For agents that speak only stdio or cannot send headers: the agent starts ``dsh mcp --hub
URL`` as its MCP server, and each JSON-RPC line it writes is posted to the hub over
Streamable HTTP by the MCP SDK's own client transport; every message from the hub (results,
notifications, the hub's own requests) is written back as one line. Nothing is read into a
message of dsh's: tools, tasks, progress and cancellation pass through as they are. Every
request carries the agent token (``Authorization: Bearer``) and who asks: ``X-Dsh-Agent``
(the ``clientInfo.name`` of the agent's ``initialize``), ``X-Dsh-Machine`` and
``X-Dsh-Cwd``, each percent-encoded UTF-8.

What becomes of each HTTP exchange is seen in one place (``_HubClient.send``): the hub could
not be reached, answered 502/503/504, or no longer knows the session (404): the message never
reached a hub, so a request is kept and sent again, and the session counts as lost; the
connection broke while a response was streaming: the request was in flight, and the agent
gets an error naming the drop (the hub may have acted on it; async tickets and tasks are
fetched by id), and a ping asks whether the session is still there. A connection that broke
once a request went out on it, before any answer, may be a proxy's doing, not the hub's: a
message a second copy of which changes nothing at the hub (a notification, an answer, a
ping, a read, the SDK's GET and DELETE) is sent once more before the hub counts as gone;
any other request of the session (a call the hub may have had) is the drop, never sent
twice. A lost session: the forwarder reconnects with back-off (bounded, with jitter; one
stderr line each way), opens a new MCP session with the agent's own ``initialize`` params,
and goes on; what the agent sent meanwhile waits, bounded in bytes. A hub that cannot be
reached when the agent initializes is that ``initialize``'s error, and one stderr line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_cli.core.limits import (
    AGENT_NAME_CHARACTERS,
    FORWARD_KEPT_BYTES,
    HUB_IDENTITY_CHARACTERS,
    MCP_MESSAGE_BYTES,
)

if TYPE_CHECKING:
    import httpx2

    from dsh_cli.mcp_server.hub_target import HubTarget

__all__ = ["Forwarder", "Identity", "forward_stdio"]

# JSON-RPC error codes the forwarder answers with itself
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
HUB_UNAVAILABLE = -32000  # the implementation-defined server-error range

FIRST_DELAY = 0.25  # seconds before the first reconnection attempt (then doubled, jittered)
LONGEST_DELAY = 10.0
RECONNECT_SECONDS = 300.0  # one round of attempts; the agent's next request starts another
HANDSHAKE_SECONDS = 30.0  # the hub's answer to a re-sent initialize
CLOSE_SECONDS = 2.0  # a closing session's DELETE
# a hub that vanished without closing the connection (a machine switched off) is found by
# TCP keepalive: probes after a minute of silence, every 10 s, six unanswered end it
KEEPALIVE = (60, 10, 6)
_RPC_ID_HEADER = "x-dsh-forward-rpc-id"  # the SDK -> dsh's client only; removed before sending
_REPEATABLE_HEADER = "x-dsh-forward-repeatable"  # likewise: the message may be sent twice
# requests a second copy of which changes nothing at the hub: a ping, and reads
REPEATABLE_METHODS = frozenset({
    "ping", "tools/list", "prompts/list", "prompts/get", "resources/list",
    "resources/templates/list", "resources/read", "completion/complete", "logging/setLevel",
    "tasks/get", "tasks/list", "tasks/result"})


@dataclass(frozen=True)
class Identity:
    """Who asks, as the hub is told on every request."""

    machine: str
    cwd: str

    @classmethod
    def here(cls) -> Identity:
        import os
        import socket

        try:
            cwd = os.getcwd()
        except OSError:  # the directory was removed under the agent
            cwd = ""
        return cls(socket.gethostname(), cwd)


def header_value(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters and percent-encoded as UTF-8 (one header line)."""
    from urllib.parse import quote

    return quote(text[:limit], safe="", errors="replace")


def repeatable(data: dict[str, Any]) -> bool:
    """Whether ``data`` may reach the hub twice without a second effect there: a notification,
    an answer to the hub's request (a second answer to one id is dropped), a ping or a read."""
    return "id" not in data or "method" not in data or data["method"] in REPEATABLE_METHODS


# What became of an exchange that did not deliver a response
NOT_DELIVERED = "not-delivered"  # no hub took it: send it again on a new session
DROPPED = "dropped"  # the connection broke after the request went out: the hub may have it
REFUSED = "refused"  # the hub refused the token


@dataclass(frozen=True)
class Fate:
    """An exchange that went wrong: what kind, and the words for it."""

    kind: str
    reason: str


@dataclass
class _Sent:
    """A request of the agent's, sent and not yet answered."""

    generation: int
    data: dict[str, Any]
    size: int


@dataclass
class _Link:
    """One MCP session with the hub: the SDK's transport over a client of its own."""

    generation: int
    client: Any  # _HubClient
    task: asyncio.Task[None] | None = None
    write: Any = None  # the transport's write stream, once open
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    fates: dict[Any, Fate] = field(default_factory=dict)  # by JSON-RPC id
    waiters: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    closing: bool = False


def _proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``NO_PROXY``, …): given
    to the transport outright, since httpx reads none once it is handed a transport."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _hub_client(url: str, headers: dict[str, str],
                seen: Callable[[Any, Fate], None]) -> httpx2.AsyncClient:
    """The HTTP client one session's transport uses; ``seen(rpc_id, fate)`` hears every
    exchange that went wrong (``rpc_id`` None: not a request of the agent's). Its classes
    are made here: httpx is imported only once a link opens."""
    import socket

    import httpx2

    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in zip(("TCP_KEEPIDLE", "TCP_KEEPINTVL", "TCP_KEEPCNT"), KEEPALIVE,
                           strict=True):
        if hasattr(socket, name):
            options.append((socket.IPPROTO_TCP, getattr(socket, name), value))

    class Watched(httpx2.AsyncByteStream):
        """A response body: a break is the drop, a body other than events is capped."""

        def __init__(self, inner: Any, rpc_id: Any, *, capped: bool) -> None:
            self._inner = inner
            self._rpc_id = rpc_id
            self._capped = capped

        async def __aiter__(self) -> Any:
            seen_bytes = 0
            try:
                async for chunk in self._inner:
                    seen_bytes += len(chunk)
                    if self._capped and seen_bytes > MCP_MESSAGE_BYTES:
                        raise httpx2.StreamError(f"a message from the hub over "
                                                 f"{MCP_MESSAGE_BYTES} bytes")
                    yield chunk
            except httpx2.TransportError as error:
                reason = _described(error)
                seen(self._rpc_id, Fate(DROPPED, reason))
                # a stream error is what the SDK answers a request with; a transport
                # error would end its whole task group
                raise httpx2.StreamError(f"the connection to the hub dropped ({reason})") \
                    from None

        async def aclose(self) -> None:
            await self._inner.aclose()

    class HubClient(httpx2.AsyncClient):
        """Every exchange with the hub goes through ``send``, where its fate is seen."""

        async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
            marked = request.headers.pop(_RPC_ID_HEADER, None)
            rpc_id = json.loads(marked) if marked is not None else None
            twice = (request.headers.pop(_REPEATABLE_HEADER, None) is not None
                     or request.method in ("GET", "DELETE"))
            has_session = "mcp-session-id" in request.headers
            again = twice
            while True:
                way = _Way()
                request.extensions = {**request.extensions, "trace": way.trace}
                try:
                    response = await super().send(request, **kwargs)
                    break
                except httpx2.TransportError as error:
                    reason = _described(error)
                    # a connection that broke once the request went out (a proxy cutting,
                    # one it let go of) says little of the hub: a message safe to send
                    # twice goes once more on another before the hub counts as gone; a
                    # request of a session the hub may have had is the drop, never sent
                    # twice (one without a session, an initialize, opens a new one anyway)
                    if again and way.went_out:
                        again = False
                        continue
                    if way.went_out and rpc_id is not None and has_session and not twice:
                        fate = Fate(DROPPED, f"the connection broke before an answer ({reason})")
                    else:
                        fate = Fate(NOT_DELIVERED, f"cannot reach the hub ({reason})")
                    seen(rpc_id, fate)
                    return _stand_in(request, fate.reason)
            status = response.status_code
            fate_now: Fate | None = None
            if status in (502, 503, 504):
                fate_now = Fate(NOT_DELIVERED, f"the hub answered HTTP {status}")
            elif status == 404 and has_session and request.method != "DELETE":
                fate_now = Fate(NOT_DELIVERED, "the hub no longer knows this session")
            elif status in (401, 403):
                fate_now = Fate(REFUSED, f"the hub refused the agent token (HTTP {status})")
            if fate_now is not None:
                seen(rpc_id, fate_now)
            kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
            response.stream = Watched(response.stream, rpc_id,
                                      capped=kind != "text/event-stream")
            return response

    return HubClient(headers=headers, timeout=httpx2.Timeout(30.0, read=None),
                     transport=httpx2.AsyncHTTPTransport(socket_options=options,
                                                         proxy=_proxy_for(url)))


class _Way:
    """How one attempt went, as httpcore's ``trace`` extension tells it: ``went_out`` once
    the request was being written on an open connection (not one that could not be made)."""

    def __init__(self) -> None:
        self.went_out = False

    async def trace(self, event: str, info: dict[str, Any]) -> None:
        if event.endswith(".send_request_headers.started"):
            self.went_out = True


def _described(error: Exception) -> str:
    from dsh_cli.core.sanitize import one_line

    return one_line(str(error) or type(error).__name__, 200)


def _stand_in(request: httpx2.Request, reason: str) -> httpx2.Response:
    """The response of a hub that could not be reached: a 503 whose body is the JSON-RPC
    error the SDK hands the agent's request (a raised error would end its task group)."""
    import httpx2

    body = json.dumps({"jsonrpc": "2.0", "id": None,
                       "error": {"code": HUB_UNAVAILABLE, "message": reason}})
    return httpx2.Response(503, headers={"content-type": "application/json"},
                           content=body.encode(), request=request)


def _object(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _error(rpc_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": message}}


class Forwarder:
    """The bridge: ``line(text)`` for each line from the agent; lines to it go to ``out``."""

    def __init__(self, target: HubTarget, *, out: Callable[[bytes], None],
                 say: Callable[[str], None], identity: Identity) -> None:
        self.target = target
        self.out = out
        self.say = say
        self.identity = identity
        self.agent = ""  # clientInfo.name, once the agent said it
        self.params: dict[str, Any] | None = None  # the agent's initialize, once it worked
        self.version: str | None = None  # the protocol version the hub chose
        self.link: _Link | None = None
        self.generation = 0
        self.inflight: dict[Any, _Sent] = {}
        self.held: list[tuple[dict[str, Any], int]] = []  # waiting for a session
        self.kept = 0  # bytes of the agent's messages in flight or held
        self.reconnecting: asyncio.Task[None] | None = None
        self._prefix = f"dsh-forward-{uuid.uuid4().hex[:12]}-"
        self._internal = 0
        self.closed = False
        self.initializing = False  # the agent's initialize is in flight: the rest waits
        self.refusal_said = False
        self.probing: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()

    # -- from the agent ---------------------------------------------------------------

    async def line(self, text: str) -> None:
        """One line from the agent: parsed, then sent on, held, or answered here."""
        from mcp_types import jsonrpc_message_adapter
        from pydantic import ValidationError

        if not text.strip():
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as error:  # nested too deeply is no JSON-RPC
            self._write(_error(None, PARSE_ERROR, f"not JSON: {error}"))
            return
        rpc_id = data.get("id") if isinstance(data, dict) else None
        try:
            message = jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            self._write(_error(rpc_id if isinstance(rpc_id, str | int) else None,
                               INVALID_REQUEST, "not a JSON-RPC 2.0 message"))
            return
        await self.forward(data, len(text), message)

    async def forward(self, data: dict[str, Any], size: int, message: Any = None) -> None:
        """A valid message of the agent's (``message``: its model, when already built), on
        its way to the hub."""
        method = data.get("method")
        is_request = method is not None and "id" in data
        if method == "notifications/cancelled":
            self._forget(data)
        if self.kept + size > FORWARD_KEPT_BYTES:  # a notification is dropped
            if is_request:
                self._write(_error(data["id"], HUB_UNAVAILABLE, f"the forwarder holds "
                                   f"{self.kept} bytes of messages already; try again later"))
            return
        if method == "initialize" and is_request:
            await self._initialize(data, size, message)
            return
        self._note_agent(data)
        if self.link is None and self.reconnecting is None:
            if self.params is None:
                # no session of the handshake era (a 2026-07-28 client sends no initialize):
                # each request carries what the hub needs
                self.link = await self._open()
            elif is_request:
                self._lost(None, "no session with the hub")
        if (self.link is None or not self.link.ready.is_set() or self.initializing
                or self.reconnecting is not None):
            if method is not None:  # a response belongs to the session that asked: dropped
                self._hold(data, size)
            return
        await self._send(self.link, data, size, message)

    def _forget(self, data: dict[str, Any]) -> None:
        """A cancelled request: no answer is owed any more; one still held is never sent."""
        params = data.get("params")
        cancelled = params.get("requestId") if isinstance(params, dict) else None
        sent = self.inflight.pop(cancelled, None)
        if sent is not None:
            self.kept -= sent.size
        kept = [(held, size) for held, size in self.held if held.get("id") != cancelled
                or "method" not in held]
        self.kept -= sum(size for _, size in self.held) - sum(size for _, size in kept)
        self.held = kept

    def _note_agent(self, data: dict[str, Any]) -> None:
        """A 2026-07-28 request names its client in ``_meta``: the agent, if not known."""
        if self.agent:
            return
        from mcp_types import CLIENT_INFO_META_KEY

        params = data.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        info = meta.get(CLIENT_INFO_META_KEY) if isinstance(meta, dict) else None
        name = info.get("name") if isinstance(info, dict) else None
        if isinstance(name, str) and name:
            self._set_agent(name)

    def _set_agent(self, name: str) -> None:
        self.agent = name
        if self.link is not None:
            self.link.client.headers["x-dsh-agent"] = header_value(name, AGENT_NAME_CHARACTERS)

    async def _initialize(self, data: dict[str, Any], size: int, message: Any) -> None:
        """The agent's ``initialize``: a new session with the hub, answered by the hub."""
        params = _object(data.get("params"))
        info = params.get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        if isinstance(name, str):
            self.agent = name
        if self.reconnecting is not None:
            self.reconnecting.cancel()
            self.reconnecting = None
        if self.link is not None:
            self._abandon(self.link, "the agent opened a new session")
            await self._close(self.link)
        self.params = None
        self.version = None
        self.link = await self._open()
        self.initializing = True
        await self._send(self.link, data, size, message)

    def _hold(self, data: dict[str, Any], size: int) -> None:
        self.kept += size
        self.held.append((data, size))

    async def _send(self, link: _Link, data: dict[str, Any], size: int,
                    message: Any = None) -> None:
        from mcp.shared.message import ClientMessageMetadata, SessionMessage
        from mcp_types import jsonrpc_message_adapter

        rpc_id = data.get("id")
        is_request = "method" in data and "id" in data
        if link.write is None:  # its transport never opened
            if is_request:
                self._write(_error(rpc_id, HUB_UNAVAILABLE, "cannot open a connection to the "
                                   f"hub at {self.target.shown}"))
            return
        headers = self._headers(data)
        if is_request:
            self.inflight[rpc_id] = _Sent(link.generation, data, size)
            self.kept += size
            headers[_RPC_ID_HEADER] = json.dumps(rpc_id)
        if message is None:  # a message kept to send again: built once more
            message = jsonrpc_message_adapter.validate_python(data, by_name=False)
        try:
            await link.write.send(SessionMessage(message,
                                                 metadata=ClientMessageMetadata(headers=headers)))
        except Exception as error:  # the link ended under it: anyio's closed/broken stream
            if is_request:
                sent = self.inflight.pop(rpc_id, None)
                if sent is not None:
                    self.kept -= sent.size
                self._hold(data, size)
            self._lost(link, _described(error) or "the connection closed")

    def _headers(self, data: dict[str, Any]) -> dict[str, str]:
        """The message's own headers: the protocol version, and a 2026-07-28 request's
        method and name (what the hub checks against its envelope)."""
        from mcp.shared.inbound import (
            MCP_METHOD_HEADER,
            MCP_NAME_HEADER,
            MCP_PROTOCOL_VERSION_HEADER,
            NAME_BEARING_METHODS,
            encode_header_value,
        )
        from mcp_types import PROTOCOL_VERSION_META_KEY

        method = data.get("method")
        params = _object(data.get("params"))
        meta = params.get("_meta")
        modern = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
        headers = {_REPEATABLE_HEADER: "1"} if repeatable(data) else {}
        if isinstance(modern, str) and isinstance(method, str):
            headers |= {MCP_PROTOCOL_VERSION_HEADER: modern, MCP_METHOD_HEADER: method}
            name_key = NAME_BEARING_METHODS.get(method)
            name = params.get(name_key) if name_key is not None else None
            if isinstance(name, str):
                headers[MCP_NAME_HEADER] = encode_header_value(name)
        elif self.version is not None and method != "initialize":
            headers[MCP_PROTOCOL_VERSION_HEADER] = self.version
        return headers

    # -- the session with the hub -----------------------------------------------------

    async def _open(self) -> _Link:
        """A new link (its transport runs in a task of its own), ready to take messages."""
        self.generation += 1
        generation = self.generation
        headers = {"authorization": f"Bearer {self.target.token}",
                   "accept-encoding": "identity",  # a compressed body's size is unknown
                   "x-dsh-machine": header_value(self.identity.machine, HUB_IDENTITY_CHARACTERS),
                   "x-dsh-cwd": header_value(self.identity.cwd, HUB_IDENTITY_CHARACTERS)}
        if self.agent:
            headers["x-dsh-agent"] = header_value(self.agent, AGENT_NAME_CHARACTERS)
        link = _Link(generation, None)
        link.client = _hub_client(self.target.url, headers,
                                  lambda rpc_id, fate: self._seen(link, rpc_id, fate))
        link.task = asyncio.ensure_future(self._run(link))
        opened = asyncio.ensure_future(link.ready.wait())
        await asyncio.wait({opened, link.task}, return_when=asyncio.FIRST_COMPLETED)
        opened.cancel()
        return link

    async def _run(self, link: _Link) -> None:
        """The link's transport: every message from the hub goes to ``_from_hub``."""
        from mcp.client.streamable_http import streamable_http_client

        try:
            async with link.client, streamable_http_client(
                    self.target.url, http_client=link.client, terminate_on_close=True,
                    max_sse_event_size=MCP_MESSAGE_BYTES) as (read, write):
                link.write = write
                link.ready.set()
                async for item in read:
                    if not isinstance(item, Exception):
                        self._from_hub(link, item.message)
        except Exception as error:  # the transport gave up: the session is lost
            self._lost(link, _described(error))
        finally:
            for waiter in link.waiters.values():
                if not waiter.done():
                    waiter.set_exception(ConnectionError("the link ended"))
            if not link.closing:
                self._lost(link, "the connection closed")

    def _seen(self, link: _Link, rpc_id: Any, fate: Fate) -> None:
        """An exchange that went wrong: kept for its request; the session may be lost."""
        if rpc_id is not None:
            link.fates[rpc_id] = fate
        if self.params is None:  # no session to lose: each request stands alone
            return
        if fate.kind == DROPPED:
            self._check(link)
        elif fate.kind == NOT_DELIVERED and link.ready.is_set():
            self._lost(link, fate.reason)

    def _from_hub(self, link: _Link, message: Any) -> None:
        from mcp_types import JSONRPCError, JSONRPCResponse

        data = message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        if not isinstance(message, JSONRPCResponse | JSONRPCError):
            self._write(data)  # the hub's notification or request
            return
        rpc_id = data.get("id")
        waiter = link.waiters.pop(rpc_id, None) if isinstance(rpc_id, str) else None
        if waiter is not None:
            if not waiter.done():
                waiter.set_result((data, link.fates.pop(rpc_id, None)))
            return
        sent = self.inflight.get(rpc_id)
        if sent is None or sent.generation != link.generation:
            return  # answered already, when its session was lost
        del self.inflight[rpc_id]
        self.kept -= sent.size
        fate = link.fates.pop(rpc_id, None)
        failed = isinstance(message, JSONRPCError)
        if sent.data.get("method") == "initialize":
            self._initialized(link, sent, data, fate)
            return
        if failed and fate is not None and fate.kind == NOT_DELIVERED and self.params:
            self.held.insert(0, (sent.data, sent.size))  # no hub had it: sent again
            self.kept += sent.size
            self._lost(link, fate.reason)
            return
        if failed and fate is not None:
            data = _error(rpc_id, HUB_UNAVAILABLE, self._dropped(fate))
            if fate.kind == REFUSED and not self.refusal_said:  # a revoked token: said once
                self.refusal_said = True
                self.say(self._dropped(fate))
        self._write(data)

    def _initialized(self, link: _Link, sent: _Sent, data: dict[str, Any],
                     fate: Fate | None) -> None:
        """The hub's answer to the agent's own ``initialize``; what waited for it goes on."""
        self.initializing = False
        if "error" in data:
            if fate is not None:
                self.say(f"{fate.reason}: {self.target.shown}")
                data = _error(data.get("id"), HUB_UNAVAILABLE,
                              f"{fate.reason}: {self.target.shown}")
                self._fail_held(fate)
            self._write(data)
            if self.held:
                self._flushing(link)
            return
        result = _object(data.get("result"))
        version = result.get("protocolVersion")
        self.version = version if isinstance(version, str) else None
        params = sent.data.get("params")
        self.params = params if isinstance(params, dict) else {}
        self._write(data)
        if self.held:
            self._flushing(link)

    def _flushing(self, link: _Link) -> None:
        """Send what waited, in order, before anything the agent sends from now on."""
        self.initializing = True
        self._later(self._flush(link)).add_done_callback(
            lambda _: setattr(self, "initializing", False))

    def _dropped(self, fate: Fate) -> str:
        if fate.kind == DROPPED:
            return (f"the connection to the hub at {self.target.shown} dropped while this "
                    f"request was in flight ({fate.reason}); the hub may have acted on it: "
                    "fetch an async ticket or task by its id, or ask again")
        return f"{fate.reason}: {self.target.shown}"

    def _lost(self, link: _Link | None, reason: str) -> None:
        """The session is gone: reconnect (once at a time), unless it is being closed."""
        if self.closed or (link is not None and (link.closing or link is not self.link)):
            return
        if self.reconnecting is not None:
            return
        if link is not None and not link.ready.is_set():
            return
        if self.params is None:  # no session to restore: the next message opens a link
            self.link = None
            if link is not None:
                self._later(self._close(link))
            return
        self.say(f"lost the hub at {self.target.shown} ({reason}); reconnecting with "
                 "back-off")
        self.reconnecting = self._later(self._reconnect(link))

    async def _reconnect(self, old: _Link | None) -> None:
        """Attempts with growing, jittered delays until a session opens or the round ends."""
        self.link = None
        if old is not None:
            self._abandon(old, "the session ended")
            await self._close(old)
        deadline = time.monotonic() + RECONNECT_SECONDS
        delay = FIRST_DELAY
        attempts = 0
        while True:
            attempts += 1
            link = await self._open()
            failure = await self._handshake(link)
            if failure is None:
                self.link = link
                self.say(f"the hub at {self.target.shown} is back: a new MCP session "
                         f"(after {attempts} attempt{'s' if attempts > 1 else ''})")
                await self._flush(link)  # what waited goes first
                self.reconnecting = None
                return
            await self._close(link)
            pause = delay * (0.5 + random.random() / 2)
            if failure.kind != NOT_DELIVERED or time.monotonic() + pause > deadline:
                self.reconnecting = None
                self.say(f"gave up reconnecting to the hub at {self.target.shown} "
                         f"({failure.reason}); the agent's next request tries again")
                self._fail_held(failure)
                return
            await asyncio.sleep(pause)
            delay = min(delay * 2, LONGEST_DELAY)

    def _abandon(self, link: _Link, reason: str) -> None:
        """``link``'s requests still in flight: kept to send again if no hub had them, else
        answered with an error naming the drop."""
        again: list[tuple[dict[str, Any], int]] = []
        for rpc_id, sent in list(self.inflight.items()):
            if sent.generation != link.generation:
                continue
            del self.inflight[rpc_id]
            fate = link.fates.pop(rpc_id, None) or Fate(DROPPED, reason)
            if fate.kind == NOT_DELIVERED and self.params is not None:
                again.append((sent.data, sent.size))
                continue
            self.kept -= sent.size
            self._write(_error(rpc_id, HUB_UNAVAILABLE,
                               self._dropped(Fate(DROPPED, fate.reason))))
        self.held[:0] = again  # sent again first, in the order the agent sent them

    async def _handshake(self, link: _Link) -> Fate | None:
        """The agent's ``initialize`` again on ``link``; None once the session is open."""
        if link.write is None:
            return Fate(NOT_DELIVERED, "the connection could not be opened")
        if self.params is None:
            return None
        answer = await self._ask(link, "initialize", self.params)
        if isinstance(answer, Fate):
            return answer
        data, fate = answer
        if "error" in data:
            if fate is not None:
                return fate
            error = _object(data["error"])
            return Fate(REFUSED, f"the hub refused the session: {error.get('message')}")
        version = _object(data.get("result")).get("protocolVersion")
        self.version = version if isinstance(version, str) else self.version
        await self._send_raw(link, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                             self._headers({"method": "notifications/initialized"}))
        return None

    async def _ask(self, link: _Link, method: str, params: dict[str, Any],
                   ) -> tuple[dict[str, Any], Fate | None] | Fate:
        """A request of the forwarder's own on ``link``: the reply and its exchange's fate,
        or the fate of a request that got no reply."""
        self._internal += 1
        rpc_id = f"{self._prefix}{self._internal}"
        waiter: asyncio.Future[tuple[dict[str, Any], Fate | None]] = \
            asyncio.get_running_loop().create_future()
        link.waiters[rpc_id] = waiter
        data = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
        await self._send_raw(link, data, {**self._headers(data),
                                          _RPC_ID_HEADER: json.dumps(rpc_id)})
        try:
            async with asyncio.timeout(HANDSHAKE_SECONDS):
                return await waiter
        except (TimeoutError, ConnectionError):
            return Fate(NOT_DELIVERED, f"no answer to {method}")
        finally:
            link.waiters.pop(rpc_id, None)

    def _check(self, link: _Link) -> None:
        """A response stream broke: a ping tells whether the session is still there (a proxy
        may cut one long stream) or lost (its fate then starts the reconnecting)."""
        if (self.probing is not None or self.closed or link is not self.link
                or self.reconnecting is not None or self.params is None):
            return

        async def probe() -> None:
            try:
                answer = await self._ask(link, "ping", {})
            finally:
                self.probing = None
            fate = answer if isinstance(answer, Fate) else answer[1]
            if fate is not None:
                self._lost(link, fate.reason)

        self.probing = self._later(probe())

    def _later(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """``work`` run as a task the forwarder keeps until it ends."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _send_raw(self, link: _Link, data: dict[str, Any],
                        headers: dict[str, str]) -> None:
        from mcp.shared.message import ClientMessageMetadata, SessionMessage
        from mcp_types import jsonrpc_message_adapter

        message = jsonrpc_message_adapter.validate_python(data, by_name=False)
        with contextlib.suppress(Exception):  # a link that ended is found by its waiter
            await link.write.send(SessionMessage(message,
                                                 metadata=ClientMessageMetadata(headers=headers)))

    async def _flush(self, link: _Link) -> None:
        while self.held and self.link is link:
            data, size = self.held.pop(0)
            self.kept -= size
            await self._send(link, data, size)

    def _fail_held(self, failure: Fate) -> None:
        held, self.held = self.held, []
        for data, size in held:
            self.kept -= size
            if "id" in data and "method" in data:
                self._write(_error(data["id"], HUB_UNAVAILABLE,
                                   f"{failure.reason}: {self.target.shown}"))

    async def _close(self, link: _Link) -> None:
        """End ``link``'s transport (its session is ended with a DELETE if the hub is there)."""
        link.closing = True
        if link.task is not None and not link.task.done():
            link.task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(link.task), CLOSE_SECONDS)

    async def close(self) -> None:
        """The agent is gone: end the session and the reconnecting, if any."""
        self.closed = True
        if self.reconnecting is not None:
            self.reconnecting.cancel()
            with contextlib.suppress(BaseException):
                await self.reconnecting
        if self.link is not None:
            await self._close(self.link)

    def _write(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        self.out(text.encode("utf-8", "replace") + b"\n")


async def forward_stdio(target: HubTarget) -> int:
    """Forward stdin/stdout to the hub until the agent closes stdin, or a signal; status."""
    import os
    import sys

    from dsh_cli.core.lines import notice
    from dsh_cli.providers.line_reader import LineReader, LineTooLong
    from dsh_cli.providers.pipe_writer import PipeWriter

    _quiet_sdk_logs()
    # stdout is the agent's wire: a stray print of a library goes to stderr instead
    wire = os.dup(1)
    os.dup2(2, 1)
    gone = asyncio.Event()
    out = PipeWriter(wire, stall=float("inf"), on_gone=lambda reason: gone.set())
    err = PipeWriter(2)  # a stderr nobody reads never holds the loop

    def say(text: str) -> None:
        err.write((notice(text) + "\n").encode("utf-8", "replace"))

    forwarder = Forwarder(target, out=out.write, say=say, identity=Identity.here())
    lines = LineReader(sys.stdin.buffer, max_line=MCP_MESSAGE_BYTES)
    ended = asyncio.ensure_future(gone.wait())
    try:
        while not gone.is_set():
            reading = asyncio.ensure_future(lines.readline())
            await asyncio.wait({reading, ended}, return_when=asyncio.FIRST_COMPLETED)
            if not reading.done():
                reading.cancel()
                break
            try:
                line = reading.result()
            except LineTooLong as error:
                forwarder._write(_error(None, INVALID_REQUEST, str(error)))
                continue
            if line is None:
                break
            await forwarder.line(line)
        await forwarder.close()
        await out.flush(CLOSE_SECONDS)
    finally:
        with contextlib.suppress(BaseException):  # a signal: the session is ended too
            await asyncio.wait_for(forwarder.close(), CLOSE_SECONDS + 1)
        ended.cancel()
        lines.close()
        out.close()
        await err.flush(0.2)
        err.close()
        with contextlib.suppress(OSError):
            os.close(wire)
    return 0


def _quiet_sdk_logs() -> None:
    """The SDK's log lines (a failed DELETE of a lost session) are no agent's business: the
    forwarder says what happened in its own lines."""
    import logging

    logger = logging.getLogger("mcp")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
