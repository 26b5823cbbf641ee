"""``WebServer``: one loopback web app served by uvicorn inside dsh's own event loop.

What every browser surface of dsh shares (``dsh web`` and ``--web``, the web desk of
``dsh attach --web``): a fresh token and CSRF value, the socket dsh binds itself (the port
is known before the first request, and a bind failure is a ``WebError`` rather than
uvicorn exiting the process), the ``Host`` allow-list, uvicorn without its signal handlers
(dsh keeps its own: Ctrl-C and SIGTERM restore the terminal and save the session), and
the one URL line on stderr.

Everything the server says on stderr (its URL line, uvicorn's log) goes through a
``PipeWriter`` when stderr is a descriptor, so a stderr pipe nobody drains never blocks the
loop. uvicorn's log is quiet: what a client causes (a hang-up, a malformed request) is a
debug line (``DSH_DEBUG``), and a server error is one line, its traceback with
``DSH_DEBUG`` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import secrets
import socket
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from dsh_cli.core.errors import INTERNAL_ERROR, WEB_BIND_FAILED, WebError, format_line
from dsh_cli.core.lines import debug, notice, warning
from dsh_cli.providers.pipe_writer import PipeWriter, descriptor_of

if TYPE_CHECKING:
    from dsh_cli.providers.web.app import WebSecrets

__all__ = ["WebServer", "embedded_server"]

_WILDCARDS = {"0.0.0.0", "::", ""}


class WebServer:
    """Bind, serve an app built for this server's secrets, print its URL, stop."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, open_browser: bool = False,
                 stderr: TextIO | None = None, debug: bool | None = None) -> None:
        self.host = host
        self.port = port
        self.open_browser = open_browser
        self.stderr = stderr
        self.debug = bool(os.environ.get("DSH_DEBUG")) if debug is None else debug
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self._stderr_pipe: PipeWriter | None = None
        self._log_handler: logging.Handler | None = None
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

    async def start(self, make_app: Callable[[WebSecrets], Any]) -> None:
        """Bind, serve ``make_app(secrets)`` and print the URL on stderr."""
        import uvicorn

        from dsh_cli.providers.web.app import WebSecrets

        sock = _bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        web_secrets = WebSecrets(self.token, self.csrf, f"dsh_{self.port}",
                                 frozenset(_allowed_hosts(self.host, self.port)))
        self._open_stderr()
        app = make_app(web_secrets)
        config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                                lifespan="off", ws="none", timeout_graceful_shutdown=1)
        self._server = embedded_server(config, self.say)
        self._task = asyncio.ensure_future(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                sock.close()
                self._task.result()  # surfaces the failure
                raise WebError("the web server stopped while starting", WEB_BIND_FAILED)
            await asyncio.sleep(0.005)
        if not _is_loopback(self.host):
            self.say(warning(f"listening on {self.host}, reachable from other "
                             "machines; anyone with the token can answer\n"))
        self.say(notice(f"open {self.url}\n"))
        if self.open_browser:
            import webbrowser

            await asyncio.get_running_loop().run_in_executor(None, webbrowser.open, self.url)

    def say(self, text: str) -> None:
        """Write ``text`` on stderr without ever blocking the loop."""
        if self._stderr_pipe is not None:
            self._stderr_pipe.write(text.encode("utf-8", "replace"))
            return
        stderr = self.stderr or sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stderr.write(text)
            stderr.flush()

    def note(self, message: str) -> None:
        """One ``dsh: debug:`` line, with ``DSH_DEBUG`` only."""
        if self.debug:
            self.say(debug(f"{message}\n"))

    def _open_stderr(self) -> None:
        stderr = self.stderr or sys.stderr
        fd = descriptor_of(stderr)
        if fd is not None:
            with contextlib.suppress(OSError, ValueError):
                stderr.flush()
            # a stderr nobody reads loses the server's lines, never the run
            self._stderr_pipe = PipeWriter(fd)
        self._log_handler = _QuietLog(self)
        uvicorn_log = logging.getLogger("uvicorn")
        uvicorn_log.addHandler(self._log_handler)
        uvicorn_log.propagate = False

    def _close_stderr(self) -> None:
        if self._log_handler is not None:
            uvicorn_log = logging.getLogger("uvicorn")
            uvicorn_log.removeHandler(self._log_handler)
            uvicorn_log.propagate = True
            self._log_handler = None

    async def close(self) -> None:
        """Stop serving (the caller ends its streams first, so this is quick)."""
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
        self._close_stderr()
        if self._stderr_pipe is not None:
            await self._stderr_pipe.flush(0.2)


class _QuietLog(logging.Handler):
    """uvicorn's log as dsh lines: a client's doing is debug, a server error one line."""

    def __init__(self, host: WebServer) -> None:
        super().__init__(logging.DEBUG)
        self.host = host

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.levelno < logging.ERROR or _client_went_away(record):
                self.host.note(f"web: {message}")
                return
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                message = f"{message}: {type(error).__name__}: {error}"
            self.host.say(format_line(INTERNAL_ERROR, message.splitlines()[0]) + "\n")
            if self.host.debug and record.exc_info:
                self.host.say(logging.Formatter().formatException(record.exc_info) + "\n")
        except Exception:  # a log line must never break the server (nor block it)
            pass


def _client_went_away(record: logging.LogRecord) -> bool:
    """A failure that is a client hanging up, not a fault of dsh."""
    error = record.exc_info[1] if record.exc_info else None
    if error is None:
        return False
    from starlette.requests import ClientDisconnect

    return isinstance(error, ClientDisconnect | ConnectionError)


def embedded_server(config: Any, say: Callable[[str], None]) -> Any:
    """uvicorn for ``config``, its connections bounded (``connections.py``); ``say`` writes
    a line on stderr without blocking (a failing ``accept()`` is one line, rate-limited)."""
    import uvicorn

    from dsh_cli.providers.web.connections import BACKLOG, AcceptErrors, guarded_h11

    config.http = guarded_h11()
    config.backlog = BACKLOG

    class EmbeddedServer(uvicorn.Server):
        """uvicorn without its signal handlers: dsh owns SIGINT and SIGTERM."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def serve(self, sockets: list[socket.socket] | None = None) -> None:
            loop = asyncio.get_running_loop()
            previous = loop.get_exception_handler()
            # kept after the server ends: asyncio may retry a failed accept after its stop
            if not isinstance(previous, AcceptErrors):
                loop.set_exception_handler(AcceptErrors(say, previous))
            await super().serve(sockets)

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
