"""The hub's own browser desk: a login link becomes a cookie, and the web desk's page is served.

Routes (the rest of the hub, ``/mcp``, ``/desk``, ``/history``, stays bearer-only and never
reads a cookie):

    GET /login/CODE   a login link: one "Sign in" button (the code is not spent by a GET,
                      so a chat's link preview or a mail scanner that fetches it does not
                      use it up)
    POST /login/CODE  the button, from the same origin: trades the code (``logins.py``) for
                      a session, the cookie (HttpOnly, SameSite=Strict, Secure on an https
                      public URL), and a 303 to ``/``, so the spent code leaves the address
                      bar
    GET /             the web desk's page (``providers/web/static``), in ``desk`` mode
    GET /static/...   its modules and style sheet
    GET /api/events   the human's inbox as server-sent events
    POST /api/respond one frame from the page: an answer, cancel, decline, decision or hold

``HubPageGuard`` checks every request first, as ``dsh web``'s ``Guard`` does, against the
public URL (``public_url.py``): a ``Host`` that does not name it is refused (DNS
rebinding); a sign-in's POST needs the public ``Origin`` (no page elsewhere logs this
browser in to another's session); past ``/login/``, a live session cookie is needed (its
human's token still in the store), and a POST needs the public ``Origin`` and the page's
CSRF value, an HMAC of the session secret (a page of another origin, which cannot read the
cookie, cannot make it).
Refusals are one line: 401 for a cookie that is no live session (none, expired, its token
removed), on which the page stops and says the human is signed out; 403 for a broken rule;
every response carries the page's CSP and no-store.

Behind the page is ``PageDesk`` (``desk/web/desk.py``), the web desk of ``dsh attach --web``,
one per human in this process (``HumanDesks``), reading the hub through a ``SelfLink``:
the human's teams' entries only, a claim while an entry is open, answers through the
store's one conditional update. A desk no browser has followed for ``IDLE_SECONDS`` is
closed (its claims let go), and so is one whose human's token was removed: its pages' event
streams end (without ``host/closed``: the hub goes on), and their reconnects are a 401.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_cli.core.limits import HUB_DESK_STREAMS, HUB_WEB_DESKS, HUB_WEB_SESSION_SECONDS
from dsh_cli.core.lines import notice
from dsh_cli.desk.web.desk import PageDesk
from dsh_cli.hub.desks import DeskDoor
from dsh_cli.hub.logins import LOGIN_PATH, redeem, session_of
from dsh_cli.hub.records import HubStoreError, Token
from dsh_cli.hub.web_link import SelfLinks
from dsh_cli.providers.web.app import PageGuard, Refusal, cookie_named, forbidden, headers_of

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from dsh_cli.hub.context import HubContext
    from dsh_cli.hub.public_url import PublicUrl

__all__ = ["CSRF_LABEL", "HubPageGuard", "HumanDesks", "csrf_of", "page_door"]

# the ASGI scope's key: the session's human, the page's CSRF value, and when (loop time,
# ``time.monotonic``) the session ends
HUMAN = "dsh.hub.human"
CSRF_LABEL = b"dsh hub page csrf"
IDLE_SECONDS = 60.0  # a human's desk nobody follows is closed after this long
SWEEP_SECONDS = 5.0  # how often the open desks are looked over (idle, token removed)
CODE_CHARACTERS = 128  # a code is 43; a longer one is refused before the store is asked
PAGE_PATHS = ("/", "/api/events", "/api/respond")
PAGE_PREFIXES = ("/static/", LOGIN_PATH)
# a page whose cookie is no live session (none, expired, or its human's token removed):
# 401, on which the page stops and shows this line
SIGNED_OUT = Refusal("signed out: your session has expired or ended; ask for a new login "
                     "link (`dsh hub login-link NAME`)", 401)
# what a login link opens: one button, so that a link fetched by a chat's preview or a
# mail scanner is not spent; its POST (same origin) trades the code. The page's referrer
# policy is "same-origin", not the guard's "no-referrer", under which a browser sends a
# form's POST with "Origin: null", which the guard refuses as it would any other
SIGN_IN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="same-origin">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>dsh</title></head>
<body><form method="post"><p>Sign in to the team's dsh hub in this browser.</p>
<button type="submit" id="sign-in">Sign in</button></form></body></html>
"""


def csrf_of(secret: str) -> str:
    """The page's CSRF value for the session whose cookie holds ``secret``."""
    return hmac.new(secret.encode(), CSRF_LABEL, hashlib.sha256).hexdigest()


class HubPageGuard(PageGuard):
    """The browser desk's checks: Host, the session cookie, and a POST's Origin and CSRF."""

    def __init__(self, app: Any, hub: HubContext, public: PublicUrl) -> None:
        super().__init__(app)
        self.hub = hub
        self.public = public

    async def check(self, scope: dict[str, Any]) -> Refusal | None:
        headers = headers_of(scope)
        host = headers.get("host", "").lower()
        if host not in self.public.hosts:
            return forbidden("unexpected Host header")
        reads = scope["method"] in ("GET", "HEAD")
        if scope.get("path", "").startswith(LOGIN_PATH):
            # no session yet; a sign-in from another origin (logging this browser in to
            # someone else's session) is refused as any foreign POST is
            if reads or headers.get("origin") == f"{self.public.scheme}://{host}":
                return None
            return forbidden("missing or foreign Origin")
        secret = cookie_named(headers.get("cookie"), self.public.cookie_name)
        session = None
        if secret is not None:
            try:
                session = await asyncio.to_thread(session_of, self.hub.store, secret)
            except HubStoreError as error:
                self.hub.report(f"{error.code}: {error.message}")
                return Refusal("the hub cannot read its store now: try again shortly", 503)
        if session is None or secret is None:
            return SIGNED_OUT  # 401, which the page acts on (it stops and says so)
        if not reads:
            if headers.get("origin") != f"{self.public.scheme}://{host}":
                return forbidden("missing or foreign Origin")
            if not hmac.compare_digest(headers.get("x-dsh-csrf", "").encode(),
                                       csrf_of(secret).encode()):
                return forbidden("missing or wrong CSRF value")
        scope[HUMAN] = (session.human, csrf_of(secret), time.monotonic() + session.seconds_left)
        return None


@dataclass
class _Open:
    """One human's desk in this process, what follows it, and since when nobody has."""

    human: Token
    desk: PageDesk
    task: asyncio.Task[None]
    idle_since: float | None = None


class HumanDesks:
    """The humans' browser desks of this hub process, made on a page's first need."""

    def __init__(self, hub: HubContext) -> None:
        self.hub = hub
        self.door = DeskDoor(hub)
        self.open: dict[str, _Open] = {}
        self._sweeping: asyncio.Task[None] | None = None

    def desk_of(self, human: Token) -> PageDesk | None:
        """``human``'s desk (made now if need be); None when ``HUB_WEB_DESKS`` are open."""
        found = self.open.get(human.name)
        if found is not None and found.human == human:
            return found.desk
        if found is not None:  # the token was made again: the old one's pages are signed out
            self._sign_out(human.name)
        if len(self.open) >= HUB_WEB_DESKS:
            return None
        door = self.door
        desk = PageDesk(report=self.hub.report, make_links=lambda on_event, on_closed:
                        SelfLinks(on_event, on_closed, door=door, human=human))
        task = asyncio.ensure_future(desk.follow())
        task.add_done_callback(self._ended)
        self.open[human.name] = _Open(human, desk, task)
        if self._sweeping is None:
            self._sweeping = asyncio.ensure_future(self._sweep())
        return desk

    def _ended(self, task: asyncio.Task[None]) -> None:
        """A desk's task ended: closed (cancelled), or failed, which is said in one line."""
        for name, found in list(self.open.items()):
            if found.task is task:
                del self.open[name]  # the next page request makes a new one
        if not task.cancelled() and task.exception() is not None:
            self.hub.report(f"a browser desk ended: {task.exception()!r}")

    def _sign_out(self, name: str) -> None:
        """``name``'s token is gone: the desk goes, its pages to hear they are signed out."""
        found = self.open.get(name)
        if found is not None:
            # not host/closed (the hub goes on): each page reconnects, and the 401 says why
            found.desk.feed.close(told=False)
        self._close(name)

    def _close(self, name: str) -> None:
        found = self.open.pop(name, None)
        if found is not None:
            found.task.cancel()  # the desk closes itself: its streams end, its claims go

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            await self.sweep()

    async def sweep(self) -> None:
        """Close the desks nobody followed for ``IDLE_SECONDS``, and those whose human's
        token is gone (removed, or made again)."""
        if not self.open:
            return
        try:
            tokens = {token.name: token for token in
                      await asyncio.to_thread(self.hub.store.tokens)}
        except HubStoreError as error:
            self.hub.report(f"{error.code}: {error.message}")
            tokens = None
        now = time.monotonic()
        for name, found in list(self.open.items()):
            if tokens is not None and tokens.get(name) != found.human:
                self._sign_out(name)
            elif found.desk.feed.connections:
                found.idle_since = None
            elif found.idle_since is None:
                found.idle_since = now
            elif now - found.idle_since >= IDLE_SECONDS:
                self._close(name)

    def stopping(self) -> None:
        """The hub is stopping: every page's event stream ends now (``host/closed``), so the
        server's connections close at once rather than being cut at its grace's end."""
        for found in self.open.values():
            found.desk.feed.close()

    async def close(self) -> None:
        if self._sweeping is not None:
            self._sweeping.cancel()
        tasks = [found.task for found in self.open.values()]
        for name in list(self.open):
            self._close(name)
        for task in [*tasks, *([self._sweeping] if self._sweeping else [])]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def page_app(hub: HubContext, public: PublicUrl, desks: HumanDesks) -> Any:
    """The browser desk's routes behind their ``HubPageGuard``."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse
    from starlette.routing import Route

    from dsh_cli.desk.web.app import desk_reply
    from dsh_cli.providers.web.app import event_stream, page_html, static_route

    def refused(status: int, said: str) -> Response:
        return PlainTextResponse(notice(said) + "\n", status_code=status)

    async def sign_in(request: Request) -> Response:
        return HTMLResponse(SIGN_IN)

    async def login(request: Request) -> Response:
        code = request.path_params["code"]
        try:
            found = (await asyncio.to_thread(redeem, hub.store, code)
                     if len(code) <= CODE_CHARACTERS else None)
        except HubStoreError as error:
            hub.report(f"{error.code}: {error.message}")
            return refused(503, "the hub cannot read its store now: open the link again "
                                "shortly")
        if found is None:
            return refused(403, "this login link was used already, has expired or was "
                                "never made: ask for a new one (`dsh hub login-link NAME`)")
        # a same-origin POST's redirect: the new Strict cookie goes with it, the code leaves
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(public.cookie_name, found.secret,
                            max_age=int(HUB_WEB_SESSION_SECONDS), path="/",
                            secure=public.secure, httponly=True, samesite="strict")
        return response

    def human_of(request: Request) -> tuple[Token, str, float]:
        human, csrf, ends = request.scope[HUMAN]
        return human, csrf, ends

    async def index(request: Request) -> Response:
        return HTMLResponse(page_html(human_of(request)[1], "desk"))

    async def events(request: Request) -> Response:
        human, _, ends = human_of(request)
        desk = desks.desk_of(human)
        if desk is None:
            return refused(503, f"this hub process serves {HUB_WEB_DESKS} humans' pages "
                                "already: try again later")
        if desk.feed.connections >= HUB_DESK_STREAMS:  # as for /desk: one human's are few
            return refused(429, f"{human.name} has {HUB_DESK_STREAMS} pages open at this hub "
                                "already: close one")
        # the stream ends with its session: the page reconnects, and the 401 says why
        return event_stream(desk.feed, until=ends)

    async def respond(request: Request) -> Response:
        desk = desks.desk_of(human_of(request)[0])
        if desk is None:
            return refused(503, f"this hub process serves {HUB_WEB_DESKS} humans' pages "
                                "already: try again later")
        return await desk_reply(request, desk.respond)

    routes = [Route(LOGIN_PATH + "{code}", sign_in, methods=["GET"]),
              Route(LOGIN_PATH + "{code}", login, methods=["POST"]),
              Route("/", index, methods=["GET"]), static_route(),
              Route("/api/events", events, methods=["GET"]),
              Route("/api/respond", respond, methods=["POST"])]
    return HubPageGuard(Starlette(routes=routes), hub, public)


def page_door(app: Any, hub: HubContext, public: PublicUrl, desks: HumanDesks) -> Any:
    """ASGI: the browser desk's paths to its page, every other request to ``app``."""
    page = page_app(hub, public, desks)

    async def door(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path in PAGE_PATHS or path.startswith(PAGE_PREFIXES):
            await page(scope, receive, send)
        else:
            await app(scope, receive, send)

    return door
