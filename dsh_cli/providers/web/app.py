"""The ASGI app: routes of ``spec/web.md`` behind the token, Host, Origin and CSRF checks.

Every request passes ``Guard`` first: a wrong ``Host`` (DNS rebinding), a missing or
wrong session cookie or token, and on POSTs a missing or foreign ``Origin`` or a wrong
``X-DSH-CSRF`` header are refused with 403. The cookie holds a value derived from the
token, never the token: a browser sends a 127.0.0.1 cookie to every local service,
whatever its port. Every response carries a restrictive CSP and
``Cache-Control: no-store``. A POST body is one frame, parsed and dispatched by the
``FrameDispatcher`` the JSON-lines relay uses (``providers/frames.py``), into the same
pending table, so the frame rules, first-wins and bad-responses-stay-pending are the
relay's. A body that is not a frame the route takes is refused with 400 and the relay's
``error`` event (``BAD_FRAME``). A body is at most ``MAX_BODY`` bytes (413): a larger
``Content-Length`` is refused before anything is read, and a body without one is read only
up to the cap. A browser that hangs up mid-request is normal: one debug line, no traceback.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from http.cookies import SimpleCookie
from importlib import resources
from time import monotonic
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from dsh_cli.core.http_body import capped_body
from dsh_cli.core.lines import notice
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.interaction import UserInteraction
from dsh_cli.providers.frames import MAX_FRAME_BYTES, BadFrame, FrameDispatcher
from dsh_cli.providers.web.feed import EventFeed
from dsh_cli.providers.web.shown import refusal_shown

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from dsh_cli.permissions.pending import RemotePermissions

__all__ = ["CSP", "SECURITY_HEADERS", "Guard", "PageGuard", "Refusal", "WebSecrets",
           "cookie_named", "create_app", "event_stream", "forbidden", "headers_of",
           "page_html", "page_routes", "read_frame_body", "refused", "static_files",
           "static_route"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
# what /static/ serves: every script and style sheet shipped under static/, by suffix
STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
MAX_BODY = MAX_FRAME_BYTES
COOKIE_LABEL = b"dsh web session cookie"  # the message the cookie's HMAC signs
# the frame kinds each POST route takes (a /api/message body may leave out its type)
RESPOND_FRAMES = ("question/answer", "question/cancel", "question/decline",
                  "question/discuss", "permission/decision")
MESSAGE_FRAMES = ("user/message",)


@dataclass(frozen=True)
class Refusal:
    """A request a guard refuses: its HTTP status and the one line its body says."""

    line: str
    status: int = 403


def forbidden(reason: str) -> Refusal:
    """The 403 of a request that breaks a rule (Host, Origin, CSRF, no session of ``dsh web``)."""
    return Refusal(f"forbidden: {reason}")


@dataclass(frozen=True)
class WebSecrets:
    """What a request must show: the token (or its cookie), an allowed Host, the CSRF value."""

    token: str
    csrf: str
    cookie_name: str
    allowed_hosts: frozenset[str]

    @property
    def cookie_value(self) -> str:
        """What the session cookie holds: HMAC-SHA256 of a fixed label keyed by the token."""
        return hmac.new(self.token.encode(), COOKIE_LABEL, hashlib.sha256).hexdigest()

    def token_ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(
            candidate.encode(), self.token.encode()
        )

    def cookie_ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(
            candidate.encode(), self.cookie_value.encode()
        )

    def csrf_ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(
            candidate.encode(), self.csrf.encode()
        )


class PageGuard:
    """Pure ASGI middleware: refuse what fails ``check`` (403 unless it says otherwise),
    stamp the security headers on every response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = await self.check(scope)

        async def stamped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                drop = {name for name, _ in SECURITY_HEADERS}
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in drop]
                message = {**message, "headers": headers + SECURITY_HEADERS}
            await send(message)

        if refusal is not None:
            body = notice(f"{refusal.line}\n").encode()
            await stamped({"type": "http.response.start", "status": refusal.status, "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, stamped)

    async def check(self, scope: dict[str, Any]) -> Refusal | None:
        """Why this request is refused, or None when it may pass."""
        raise NotImplementedError


class Guard(PageGuard):
    """The guard of a page whose one token dsh printed (``dsh web``, ``dsh attach --web``)."""

    def __init__(self, app: Any, secrets: WebSecrets) -> None:
        super().__init__(app)
        self.secrets = secrets

    async def check(self, scope: dict[str, Any]) -> Refusal | None:
        reason = self.refusal(scope)
        return forbidden(reason) if reason is not None else None

    def refusal(self, scope: dict[str, Any]) -> str | None:
        """Why this request is refused, or None when it may pass."""
        headers = headers_of(scope)
        host = headers.get("host", "").lower()
        if host not in self.secrets.allowed_hosts:
            return "unexpected Host header"
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if "token" in query:
            if not self.secrets.token_ok(query["token"][0]):
                return "wrong token"
        elif not self.secrets.cookie_ok(cookie_named(headers.get("cookie"),
                                                     self.secrets.cookie_name)):
            return "no session: open the URL dsh printed (with its token)"
        if scope["method"] not in ("GET", "HEAD"):
            if headers.get("origin") != f"http://{host}":
                return "missing or foreign Origin"
            if not self.secrets.csrf_ok(headers.get("x-dsh-csrf")):
                return "missing or wrong CSRF value"
        return None


def headers_of(scope: dict[str, Any]) -> dict[str, str]:
    # a repeated header takes its first value: the checks never merge two Hosts
    found: dict[str, str] = {}
    for key, value in scope.get("headers", []):
        found.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return found


def cookie_named(header: str | None, name: str) -> str | None:
    if not header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed Cookie header is simply no session
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def _static_text(name: str) -> str:
    return resources.files("dsh_cli.providers.web").joinpath("static", name).read_text("utf-8")


def static_files() -> dict[str, str]:
    """Every file ``/static/`` serves (``js/main.js``, ``style.css``) and its content type."""
    found: dict[str, str] = {}

    def walk(folder: Any, prefix: str) -> None:
        for child in folder.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif any(child.name.endswith(suffix) for suffix in STATIC_TYPES):
                found[prefix + child.name] = STATIC_TYPES["." + child.name.rsplit(".", 1)[1]]

    walk(resources.files("dsh_cli.providers.web").joinpath("static"), "")
    return found


def refused(error: BadFrame) -> dict[str, Any]:
    """The relay's ``error`` event for a refused body, with the words the page shows."""
    data = error.event().to_json()
    return {**data, "shown": {"error": sanitize_line(str(data.get("message") or ""))}}


def page_html(csrf: str, mode: str) -> str:
    """The page (``index.html``) with its CSRF value and mode filled in."""
    return _static_text("index.html").replace("{{csrf}}", csrf).replace("{{mode}}", mode)


def static_route() -> Any:
    """``/static/``: the page's modules and style sheet, from a fixed list."""
    from starlette.responses import Response
    from starlette.routing import Route

    served = static_files()

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in served:  # a fixed list: no path is ever joined from the request
            return Response("not found\n", status_code=404, media_type="text/plain")
        return Response(_static_text(name), media_type=served[name])

    return Route("/static/{name:path}", static, methods=["GET"])


def event_stream(feed: EventFeed, until: float | None = None) -> Response:
    """``/api/events``: one browser's connection to ``feed``, as server-sent events, ended
    (untold: the page reconnects) at ``until`` (``time.monotonic``) if given."""
    from sse_starlette import EventSourceResponse

    queue = feed.connect()

    async def stream() -> Any:
        try:
            while True:
                try:
                    item = await asyncio.wait_for(
                        queue.get(), None if until is None else max(0.0, until - monotonic()))
                except TimeoutError:
                    return
                if item is None:
                    return
                yield {"event": item["type"], "data": json.dumps(item, ensure_ascii=False)}
        finally:
            feed.disconnect(queue)

    return EventSourceResponse(stream(), ping=15)


def page_routes(secrets: WebSecrets, mode: str, feed: EventFeed) -> list[Any]:
    """What every dsh page serves: ``/`` (the token swapped for the cookie), ``/static/``
    (the page's modules, from a fixed list) and ``/api/events`` (the feed, as SSE)."""
    from starlette.responses import HTMLResponse, RedirectResponse
    from starlette.routing import Route

    page = page_html(secrets.csrf, mode)

    async def index(request: Request) -> Response:
        if "token" in request.query_params:
            # the Guard checked the token; swap it for a cookie and clear the address bar
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(secrets.cookie_name, secrets.cookie_value, httponly=True,
                                samesite="strict", path="/")
            return response
        return HTMLResponse(page)

    async def events(request: Request) -> Response:
        return event_stream(feed)

    return [Route("/", index, methods=["GET"]), static_route(),
            Route("/api/events", events, methods=["GET"])]


async def read_frame_body(request: Request, debug: Callable[[str], object] | None = None
                          ) -> bytes | Response:
    """The body of a POST, or the response refusing it (too large: 413; hung up: 400)."""
    from starlette.requests import ClientDisconnect
    from starlette.responses import JSONResponse, Response

    try:
        body = await capped_body(request, MAX_BODY)
    except ClientDisconnect:  # nobody is left to read a reply
        if debug is not None:
            debug(f"the browser hung up during {request.method} {request.url.path}")
        return Response(status_code=400)
    if body is None:
        too_large = BadFrame(f"body too large (more than {MAX_BODY} bytes)")
        return JSONResponse(refused(too_large), status_code=413)
    return body


def create_app(
    ui: UserInteraction,
    feed: EventFeed,
    secrets: WebSecrets,
    on_message: Callable[[str], object] | None = None,
    permissions: RemotePermissions | None = None,
    debug: Callable[[str], object] | None = None,
) -> Any:
    """The Starlette app wrapped in its ``Guard``; ``permissions`` takes permission decisions,
    ``debug`` quiet one-line notes."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    mode = "chat" if on_message is not None else "questions"
    # a chat's page may leave a batch to talk about it; a questions-only page may not
    frames = FrameDispatcher(ui.pending, on_message, permissions, discuss=mode == "chat")
    async def respond(request: Request) -> Response:
        return await _dispatch(request, RESPOND_FRAMES)

    async def message(request: Request) -> Response:
        return await _dispatch(request, MESSAGE_FRAMES, default_type="user/message")

    async def _dispatch(request: Request, accept: tuple[str, ...],
                        default_type: str | None = None) -> Response:
        """One body through the frame dispatcher: the ack (200), accepted (202) or 400."""
        body = await read_frame_body(request, debug)
        if not isinstance(body, bytes):
            return body
        try:
            replies = frames.dispatch(body, accept=accept, default_type=default_type)
        except BadFrame as error:
            return JSONResponse(refused(error), status_code=400)
        if replies:  # an answer, a decision or a cancel: its response/ack
            (ack,) = replies
            data = ack.to_json()
            if not data.get("accepted"):
                data["shown"] = refusal_shown(data)
            return JSONResponse(data)
        return JSONResponse({"accepted": True}, status_code=202)

    routes = [
        *page_routes(secrets, mode, feed),
        Route("/api/respond", respond, methods=["POST"]),
        Route("/api/message", message, methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), secrets)

