"""``dsh mcp login``'s flow: the SDK's authorization code + PKCE with a one-shot callback.

A listener on 127.0.0.1 (a free port) takes exactly one ``/callback?code=&state=`` whose
``state`` is the one of the authorization URL just shown (any other is refused with 400 and
the listener waits on: any local process can reach the port) and closes, ending the
connections left idle on it; the SDK discovers the server's metadata, registers (or uses
``oauth.client_id``), builds the authorization URL with PKCE and the challenge's scopes
(with the scope a session's step-up kept, which a successful login drops), checks the state,
and stores the tokens (``tokens.StoredLogin``). The URL is handed to ``show`` (and ``browse``
where a browser can open); where none can, the redirected address pasted on a terminal's
stdin is taken instead. No answer within ``timeout`` is ``LoginFailed``, and so is an
authorization server that does not answer the flow's own requests (named in the line).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import parse_qs, urlsplit

from dsh_cli.core.errors import MCP_LOGIN_FAILED, HarnessError
from dsh_cli.core.limits import CALLBACK_LINE_BYTES as MAX_REQUEST_LINE
from dsh_cli.core.lines import notice

if TYPE_CHECKING:
    from dsh_cli.mcp_client.config.servers import ServerConfig

__all__ = ["LoginFailed", "log_in", "log_out"]

CALLBACK_PATH = "/callback"
PAGE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
        b"\r\n" + notice("logged in; you can close this tab.\n").encode())
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
WRONG_STATE = (b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
               b"Connection: close\r\n\r\n"
               + notice("this is not the answer to the login's request (wrong state)\n").encode())


class LoginFailed(HarnessError):
    """The login did not finish: what went wrong, in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message, MCP_LOGIN_FAILED)


class Callback:
    """The listener on 127.0.0.1 that the browser is sent back to: one redirect taken per
    authorization round (``arm``), a late or repeated one ignored."""

    def __init__(self) -> None:
        self.result: asyncio.Future[dict[str, str]] | None = None
        self._server: asyncio.Server | None = None
        self.port = 0
        self.state: str | None = None  # the round's, from the URL shown; None: none shown
        self._open: dict[asyncio.StreamWriter, asyncio.Task[Any]] = {}

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def start(self) -> None:
        self.result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._open[writer] = task
        try:
            line = await asyncio.wait_for(reader.readuntil(b"\r\n"), 10)
            parts = line[:MAX_REQUEST_LINE].decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) == 3 and parts[0] == "GET" else None
            if target is None or target.path != CALLBACK_PATH:
                writer.write(NOT_FOUND)
                return
            writer.write(PAGE if self.settle(target.query) else WRONG_STATE)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                ConnectionError):
            return
        finally:
            self._open.pop(writer, None)
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()

    def arm(self, url: str) -> None:
        """A new authorization round, ``url`` the one shown: the next redirect with its
        state answers it, not the last one's."""
        self.state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        if self.result is not None and self.result.done():
            self.result = asyncio.get_running_loop().create_future()

    def settle(self, query: str) -> bool:
        """The round's first redirect with its state wins; whether this one is taken (a
        later one, or one with another state, changes nothing)."""
        values = {key: items[0] for key, items in parse_qs(query).items()}
        if self.state is None or values.get("state") != self.state:
            return False  # before any URL was shown, nothing can be its answer
        if self.result is not None and not self.result.done():
            self.result.set_result(values)
        return True

    async def close(self) -> None:
        """Stop listening, and end the connections left open (a browser's idle ones): a
        handler still reading when the loop ends would be cancelled, and Python 3.11's
        streams print that as a traceback."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._open):
            writer.close()  # its handler reads the end of the stream and returns
        if self._open:
            await asyncio.wait(set(self._open.values()), timeout=1)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()


async def log_in(config: ServerConfig, auth_dir: Path, *, show: Callable[[str], None],
                 browse: Callable[[str], Awaitable[object]] | None = None,
                 paste: TextIO | None = None, timeout: float = 300.0) -> None:
    """Log in to ``config``'s server and store the tokens; raises ``LoginFailed``."""
    from mcp.shared.auth import AuthorizationCodeResult

    from dsh_cli.core.errors import ToolError
    from dsh_cli.mcp_client.auth.endpoint_check import check_endpoint
    from dsh_cli.mcp_client.auth.oauth import interactive_auth
    from dsh_cli.mcp_client.auth.tokens import (
        LOGIN_KEYS,
        WANTED_SCOPE,
        StoredLogin,
        resource_of,
        tokens_file,
    )
    from dsh_cli.mcp_client.connection import McpConnection

    assert config.url is not None
    storage = StoredLogin(tokens_file(auth_dir), resource_of(config.url))
    # a fresh login: the old tokens and registration go (a registration names the
    # callback's port, a new one each login); a step-up's scope stays until one succeeds
    wanted = storage.wanted_scope()
    storage.file.drop(storage.resource, *LOGIN_KEYS)
    callback = Callback()
    await callback.start()
    if config.oauth.client_id:  # registered beforehand: no dynamic registration
        from mcp.shared.auth import OAuthClientInformationFull

        await storage.set_client_info(OAuthClientInformationFull.model_validate({
            "client_id": config.oauth.client_id, "redirect_uris": [callback.redirect_uri],
            "token_endpoint_auth_method": "none"}))
    unpaste = _take_pasted(paste, callback)

    async def redirect(url: str) -> None:
        # the SDK authorizes again within one login (at most once a request) when a token
        # it got is refused, the server wants more scope or names a new authorization server
        check_endpoint(url)
        callback.arm(url)
        show(url)
        if browse is not None:
            await browse(url)

    async def answered() -> AuthorizationCodeResult:
        assert callback.result is not None
        try:
            values = await asyncio.wait_for(asyncio.shield(callback.result), timeout)
        except TimeoutError:
            raise LoginFailed(f"no answer from the browser within {timeout:g} s "
                              f"(run dsh mcp login {config.name} again)") from None
        if "error" in values:
            raise LoginFailed(f"the authorization server refused: {values['error']} "
                              f"{values.get('error_description', '')}".strip())
        if not values.get("code"):
            raise LoginFailed("the browser came back without an authorization code")
        return AuthorizationCodeResult(code=values["code"], state=values.get("state"),
                                       iss=values.get("iss"))

    auth = interactive_auth(config, storage, redirect=redirect, callback=answered,
                            redirect_uri=callback.redirect_uri, widen=wanted)
    # the human's time does not count against startup_timeout
    waiting = dataclasses.replace(config, startup_timeout=config.startup_timeout + timeout)
    # the login's server log: nothing in it is kept (an error could quote a token)
    discard = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    connection = McpConnection(waiting, errlog=discard, http_auth=auth)
    try:
        await connection.start()
    except ToolError as error:
        raise LoginFailed(_reason(connection, error.message, auth, waiting)) from None
    finally:
        unpaste()
        await connection.close()
        await callback.close()
        discard.close()
    if not (await storage.get_tokens()):
        raise LoginFailed(f"{config.name} asked for no login; nothing was stored")
    storage.file.drop(storage.resource, WANTED_SCOPE)


def log_out(config: ServerConfig, auth_dir: Path) -> bool:
    """Forget the server's login (tokens and registration); whether there was one."""
    from dsh_cli.mcp_client.auth.tokens import resource_of, tokens_file

    assert config.url is not None
    return tokens_file(auth_dir).forget(resource_of(config.url))


def _reason(connection: Any, message: str, auth: Any, config: ServerConfig) -> str:
    """The one line: the flow's own reason (``connection.failure``), not the wrapper's; for
    a timeout, the endpoint of the authorization server that did not answer."""
    from dsh_cli.core.sanitize import sanitize_line

    pending = getattr(auth, "waiting_on", None)
    if pending is not None and connection.timed_out:
        return (f"no answer from {sanitize_line(pending)} within "
                f"{config.startup_timeout:g} s")
    return connection.failure or message


def _take_pasted(paste: TextIO | None, callback: Callback) -> Callable[[], None]:
    """Where no browser can open here: a pasted redirect URL (or code) settles the login."""
    if paste is None:
        return lambda: None
    loop = asyncio.get_running_loop()
    descriptor = paste.fileno()

    def readable() -> None:
        line = paste.readline().strip()
        if not line:
            return
        if "code=" in urlsplit(line).query:  # the address the browser was sent back to
            callback.settle(urlsplit(line).query)

    try:
        loop.add_reader(descriptor, readable)
    except (NotImplementedError, ValueError, OSError):
        return lambda: None

    def stop() -> None:
        loop.remove_reader(descriptor)

    return stop
