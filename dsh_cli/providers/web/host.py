"""``WebHost``: the web app served by uvicorn inside dsh's own event loop.

``host.provider`` answers questions and ``host.permissions`` (a ``RemotePermissions``) is the
session's permission provider: register it on a ``PermissionGate`` built with
``events=ui.events`` and the browser shows a permission card for each request.

dsh keeps its signal handling (Ctrl-C, SIGTERM restore the terminal and save the
session), so the server is started without uvicorn's signal capture, on a socket dsh
binds itself (the port is known before the first request, and a bind failure is a
``WebError`` rather than uvicorn exiting the process).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import secrets
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from dsh_cli.core.errors import WEB_BIND_FAILED, WebError
from dsh_cli.interaction import (
    ASK_ABORTED,
    AskContext,
    AskUserQuestionAnswer,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.providers.web.feed import EventFeed

__all__ = ["WEB_BIND_FAILED", "WebError", "WebHost", "WebQuestionProvider"]

_WILDCARDS = {"0.0.0.0", "::", ""}


class WebQuestionProvider:
    """Shows nothing itself: a browser settles the batch through ``ui.pending``."""

    def __init__(self) -> None:
        self._closed: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._closed is None:
            self._closed = asyncio.Event()
        return self._closed

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        # The seam registered and announced the batch; the SSE feed carries it to the
        # browser, and the seam returns as soon as the table settles it.
        await self._event().wait()
        raise UserInteractionError("the web host closed", ASK_ABORTED)

    def close(self) -> None:
        self._event().set()


class WebHost:
    """Serve the question composer (and, with ``on_message``, the chat) for one ``ui``."""

    def __init__(
        self,
        ui: UserInteraction,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        open_browser: bool = False,
        on_message: Callable[[str], Any] | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.ui = ui
        self.host = host
        self.port = port
        self.open_browser = open_browser
        self.on_message = on_message
        self.stderr = stderr
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.provider = WebQuestionProvider()
        self.permissions = RemotePermissions()
        self.feed = EventFeed(ui.pending)
        self._unsubscribe: Callable[[], None] | None = None
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    @property
    def origin(self) -> str:
        """``http://HOST:PORT`` as printed (loopback for a wildcard bind)."""
        shown = "127.0.0.1" if self.host in _WILDCARDS else self.host
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/?token={self.token}"

    async def start(self) -> None:
        """Bind, serve, subscribe to ``ui.events`` and print the URL on stderr."""
        import uvicorn

        from dsh_cli.providers.web.app import WebSecrets, create_app

        sock = _bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        web_secrets = WebSecrets(self.token, self.csrf, f"dsh_{self.port}",
                                 frozenset(_allowed_hosts(self.host, self.port)))
        app = create_app(self.ui, self.feed, web_secrets, self.on_message, self.permissions)
        config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                                lifespan="off", ws="none", timeout_graceful_shutdown=1)
        self._server = _embedded_server(config)
        self._unsubscribe = self.feed.attach(self.ui.events.subscribe)
        self._task = asyncio.ensure_future(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                sock.close()
                self._task.result()  # surfaces the failure
                raise WebError("the web server stopped while starting", WEB_BIND_FAILED)
            await asyncio.sleep(0.005)
        stderr = self.stderr or sys.stderr
        if not _is_loopback(self.host):
            stderr.write(f"dsh: warning: listening on {self.host}, reachable from other "
                         "machines; anyone with the token can answer\n")
        stderr.write(f"dsh: open {self.url}\n")
        stderr.flush()
        if self.open_browser:
            import webbrowser

            await asyncio.get_running_loop().run_in_executor(None, webbrowser.open, self.url)

    async def close(self) -> None:
        """Stop serving: pending asks and permission requests end ``ASK_ABORTED``; streams end."""
        self.provider.close()
        self.permissions.close("the web host closed")
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.feed.close()
        if self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=3)
        except TimeoutError:
            self._server.force_exit = True
            with contextlib.suppress(BaseException):
                await self._task
        except Exception:  # the server failing on the way out must not mask the caller's exit
            pass
        self._task = None


def _embedded_server(config: Any) -> Any:
    import uvicorn

    class EmbeddedServer(uvicorn.Server):
        """uvicorn without its signal handlers: dsh owns SIGINT and SIGTERM."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # uvicorn >= 0.29
            yield

        def install_signal_handlers(self) -> None:  # older uvicorn
            return None

    return EmbeddedServer(config)


def _bind(host: str, port: int) -> socket.socket:
    """A bound (not yet listening) socket; ``WebError`` when the address will not do."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise WebError(f"cannot resolve --host {host}: {error.strerror}", WEB_BIND_FAILED) from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as error:
        sock.close()
        raise WebError(f"cannot listen on {host}:{port}: {error.strerror}",
                       WEB_BIND_FAILED) from None
    return sock


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _allowed_hosts(host: str, port: int) -> set[str]:
    """``Host`` header values a request may carry: the bound address (DNS rebinding guard)."""
    names = {host.lower()}
    if _is_loopback(host) or host in _WILDCARDS:
        names |= {"127.0.0.1", "localhost", "[::1]"}
    if host in _WILDCARDS:
        # a wildcard bind is reached by this machine's names and addresses; IP literals
        # cannot be rebound, and the token is still required
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        with contextlib.suppress(OSError):
            names |= {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    bracketed = {f"[{name}]" if ":" in name and not name.startswith("[") else name
                 for name in names}
    return {f"{name}:{port}" for name in bracketed}
