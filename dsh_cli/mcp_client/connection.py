"""One connection to an MCP server, kept open for the session by a task of its own.

The SDK's ``mcp.Client`` is an async context manager whose cancel scopes must be entered
and left in one task, so each server gets a task that opens the client, lists the tools,
reports ready, and holds the connection until ``close``. Calls are made from the agent's
task through the open client. The SDK is imported here only, when a server is configured.

A call drives the 2026-07-28 input-required rounds itself (rather than the SDK's driver,
which asks each embedded request on its own) so that all of a round's elicitations become
one question batch; the session era's ``elicitation/create`` reaches the same ``Elicitor``.

Each round's batch is stored with the round itself (``resume.Continuation``), so a call
resumed after a crash re-asks that batch under its ``rpc_id`` and retries the round with
the stored ``requestState``. A server that refuses the state (-32602: a restarted server
under a process-local key, or an expired one) gets the call afresh, with a notice line;
the answer just given settles the same batch again, so the human is not asked twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import (
    MCP_AUTH_REQUIRED,
    MCP_STATE_NOT_STORED,
    MCP_STATE_REFUSED,
    MCP_TIMEOUT,
    MCP_TOOL_ERROR,
    MCP_UNAVAILABLE,
    ToolError,
    format_line,
)
from dsh_cli.core.limits import INPUT_ROUNDS as MAX_INPUT_ROUNDS
from dsh_cli.core.limits import REQUEST_STATE_BYTES
from dsh_cli.core.sanitize import one_line
from dsh_cli.core.tasks import close_task
from dsh_cli.mcp_client.forms.asking import CurrentCall, Elicitor, UrlAsker
from dsh_cli.mcp_client.forms.elicitation import INVALID_PARAMS
from dsh_cli.mcp_client.forms.resume import Continuation
from dsh_cli.mcp_client.forms.url_mode import open_page

if TYPE_CHECKING:
    from mcp_types import InputRequiredResult

    from dsh_cli.interaction.service import UserInteraction
    from dsh_cli.mcp_client.auth.login_required import LoginRequired
    from dsh_cli.mcp_client.config.servers import ServerConfig
    from dsh_cli.mcp_client.transport.server_log import LogSink
    from dsh_cli.tools.registry import ToolContext

__all__ = ["McpConnection"]

CLOSE_GRACE_SECONDS = 3.0
STATE_ONLY_PAUSE = 0.05


class McpConnection:
    """A started (or failed) server: its tools, and ``call`` while it runs."""

    def __init__(self, config: ServerConfig, *, errlog: LogSink,
                 elicitation: UserInteraction | None = None, client_name: str = "dsh",
                 client_version: str = "0",
                 open_url: Callable[[str], object] | None = None,
                 answerable: bool = False,
                 notice: Callable[[str], None] | None = None,
                 auth_dir: Path | None = None, http_auth: Any = None,
                 url_asker: UrlAsker | None = None) -> None:
        self.config = config
        # where logins are kept (the config directory); None: no login is presented.
        # ``http_auth``: an ``httpx2.Auth`` to present instead (``dsh mcp login``'s flow)
        self.auth_dir = auth_dir
        self.http_auth = http_auth
        self.unauthorized = False  # the server answered 401
        self.forbidden: str | None = None  # what its last 403 said, in one line
        # the latest login the session could not make (auth.http_auth's ``refused``),
        # and how many there were: a call reports one that came while it ran
        self.login_refused: LoginRequired | None = None
        self._refusals = 0
        self.errlog = errlog
        # where a line the user should read goes (stderr); by default the server log
        self.notice = notice or self._log
        # whose seam answers the server's questions when no tool call is current; with a
        # provider registered there (or ``answerable``: one is about to be), the
        # elicitation capability is declared
        self.elicitor = Elicitor(config.name, elicitation, open_url=open_url or open_page,
                                 answerable=answerable, url_asker=url_asker)
        self._elicits = False
        self.client_name = client_name
        self.client_version = client_version
        self.tools: list[Any] = []
        self.failure: str | None = None
        self.timed_out = False  # start() gave up waiting (startup_timeout)
        self._client: Any = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._client is not None and self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Connect and list the tools within ``startup_timeout``; raises ``ToolError``."""
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(self._serve())
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.config.startup_timeout)
        except TimeoutError:
            self.failure = f"did not start within {self.config.startup_timeout:g} s"
            self.timed_out = True
            self._ready.cancel()  # nobody waits for it any more
            await self.close()
            raise ToolError(f"MCP server {self.config.name} {self.failure}",
                            MCP_UNAVAILABLE) from None
        except Exception as error:
            self.failure = self.failure or self.forbidden or _describe(error)
            await self.close()
            # a login being made (``http_auth`` given) reports its own failure instead
            needed = _login_required(error) or self.login_refused
            # an entry that logs in by itself and met no refusal (its authorization server
            # did not answer) is no login to run: the failure says what happened
            wants_login = self.unauthorized and not self.config.oauth.browserless
            if (wants_login and self.http_auth is None) or needed is not None:
                self.failure = _login_line(self.config.name, needed)
                raise ToolError(self.failure, MCP_AUTH_REQUIRED) from None
            raise ToolError(f"MCP server {self.config.name} failed to start: {self.failure}",
                            MCP_UNAVAILABLE) from None

    async def _serve(self) -> None:
        assert self._ready is not None and self._stop is not None
        try:
            async with self._open() as client:
                tools = await _list_all_tools(client)
                self._client = client
                self.tools = tools
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as error:
            if not self._ready.done():
                self._ready.set_exception(error if isinstance(error, Exception)
                                          else RuntimeError("the server connection ended"))
                self._ready.exception()  # start() reports it; never "never retrieved"
            elif self.failure is None and not self._stop.is_set():
                self.failure = f"the connection ended: {_describe(error)}"
            if not isinstance(error, Exception):
                raise
        finally:
            self._client = None

    def _open(self) -> Any:
        from mcp import Client
        from mcp_types import Implementation

        from dsh_cli.mcp_client.result_type import complete_by_default

        info = Implementation(name=self.client_name, version=self.client_version)
        options: dict[str, Any] = {"client_info": info, "mode": self.config.protocol}
        self._elicits = self.elicitor.can_answer
        if self._elicits:
            options["elicitation_callback"] = self.elicitor
            options["message_handler"] = self._on_message
        return Client(complete_by_default(self._transport()), **options)

    async def _on_message(self, message: Any) -> None:
        """A server's notification: a URL-mode page done goes to the elicitor (2025-11-25;
        the 2026-07-28 protocol has no such notification)."""
        if getattr(message, "method", None) == "notifications/elicitation/complete":
            elicitation_id = getattr(message.params, "elicitation_id", None)
            if isinstance(elicitation_id, str):
                self.elicitor.completed(elicitation_id)

    def _transport(self) -> Any:
        """The server's streams, each message bounded by ``max_mcp_message`` before it is
        parsed (``bounded``); ``_open`` fills in what a result leaves out (``result_type``)."""
        config = self.config
        limit = config.max_mcp_message
        if config.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            from dsh_cli.mcp_client.transport.bounded import bound_body

            # identity: a compressed body's size is not known until it is unpacked
            http = create_mcp_http_client(headers={"Accept-Encoding": "identity",
                                                   **config.headers}, auth=self._auth())
            http.event_hooks["response"].append(bound_body(limit))
            http.event_hooks["response"].append(self._saw)
            return streamable_http_client(config.url, http_client=http,
                                          max_sse_event_size=limit)
        from mcp.client.stdio import StdioServerParameters

        from dsh_cli.mcp_client.transport.stdio import stdio_transport

        params = StdioServerParameters(command=config.command or "", args=list(config.args),
                                       env=dict(config.env) or None, cwd=config.cwd)
        # the server's stderr goes to our log: it must not write over a question on screen
        return stdio_transport(params, name=config.name, limit=limit, log=self.errlog,
                               notice=self.notice, ended=self._ended)

    def _ended(self, reason: str) -> None:
        """The transport closed the connection because of what the server sent: one line
        says so while the server runs (a server still starting is reported by ``start``)."""
        if self.failure is not None:
            return
        self.failure = reason
        if self._ready is not None and self._ready.done():
            self.notice(format_line(MCP_UNAVAILABLE, f"MCP server {self.config.name} "
                                                     f"{reason}; its connection is closed"))

    def _auth(self) -> Any:
        """The login to present: the one given, else the stored one (auth.http_auth)."""
        if self.http_auth is not None or self.auth_dir is None:
            return self.http_auth
        from dsh_cli.mcp_client.auth.oauth import http_auth

        return http_auth(self.config, self.auth_dir, refused=self._refused)

    def _refused(self, needed: LoginRequired) -> None:
        self.login_refused = needed
        self._refusals += 1

    async def _saw(self, response: Any) -> None:
        """A 401 that the login (if any) could not answer is the server wanting one; a 403
        is kept in words (the SDK says only "Server returned an error response")."""
        if not str(response.request.url).startswith(str(self.config.url).split("?")[0]):
            return
        if response.status_code == 401:
            self.unauthorized = True
        elif response.status_code == 403:
            self.forbidden = _forbidden(response)

    async def call(self, tool: str, arguments: dict[str, Any],
                   ctx: ToolContext | None = None) -> Any:
        """The server's ``CallToolResult``; ``ToolError`` for timeouts and a dead server.

        ``ctx`` is the tool call's context: the server's questions are asked through its
        seam, and the time they wait for the human does not count against ``tool_timeout``.
        """
        client = self._client
        if client is None or not self.running or self.failure is not None:
            reason = self.failure or "is not running"
            raise ToolError(f"MCP server {self.config.name} {reason}", MCP_UNAVAILABLE)
        refusals = self._refusals
        try:
            async with asyncio.timeout(self.config.tool_timeout) as deadline:
                marked = (self.elicitor.calling(ctx, deadline) if ctx is not None
                          else contextlib.nullcontext())
                with marked as call:
                    return await self._rounds(client, tool, arguments, call)
        except TimeoutError:
            raise ToolError(f"{tool} on {self.config.name} took longer than "
                            f"{self.config.tool_timeout:g} s", MCP_TIMEOUT) from None
        except (asyncio.CancelledError, ToolError):
            raise
        except Exception as error:
            if self._refusals > refusals and self.login_refused is not None:
                # the server refused the call's login: what to run, not its HTTP status
                raise ToolError(_login_line(self.config.name, self.login_refused),
                                MCP_AUTH_REQUIRED) from None
            if _is_protocol_error(error):
                code, reason = MCP_TOOL_ERROR, _describe(error)
            elif (misfit := _misfit(error)) is not None:  # it runs; that answer is wrong
                code, reason = MCP_TOOL_ERROR, misfit
            else:  # the connection is gone: say why, when the transport knows
                code, reason = MCP_UNAVAILABLE, self.failure or _describe(error)
            raise ToolError(f"{tool} on {self.config.name} failed: {reason}", code) from None

    async def _rounds(self, client: Any, tool: str, arguments: dict[str, Any],
                      call: CurrentCall | None = None) -> Any:
        """Call, answer what the server asks for, call again with the answers and state.

        A resumed call whose batch stored its round starts by re-asking that round and
        retrying it with the stored state; refused, the call starts over (once).
        """
        from mcp.shared.exceptions import MCPError
        from mcp_types import InputRequiredResult

        session = client.session
        responses: Any = None
        state: str | None = None
        stored = (Continuation.from_json(call.ctx.continuation, self.config.name,
                                          self.config.endpoint, tool)
                  if call is not None and self._elicits else None)
        if stored is not None:
            state = stored.request_state
            responses = await self._answer_inputs(session, tool, stored.result())
        retrying = stored is not None
        told = False  # that this call's forms cannot be resumed: said once
        for _ in range(MAX_INPUT_ROUNDS):
            try:
                result = await session.call_tool(tool, arguments, input_responses=responses,
                                                 request_state=state,
                                                 allow_input_required=True)
            except MCPError as error:
                if not (retrying and call is not None and error.error.code == INVALID_PARAMS):
                    raise
                self.notice(format_line(MCP_STATE_REFUSED, (
                    f"{self.config.name} refused the stored state of {tool} "
                    f"({_describe(error)}); calling it afresh with the answers given")))
                call.start_over()
                responses, state, retrying = None, None, False
                continue
            retrying = False
            if not isinstance(result, InputRequiredResult):
                return result
            state = result.request_state
            if result.input_requests:
                keep = _storable(state)
                if not keep and not told:
                    told = True
                    self.notice(format_line(MCP_STATE_NOT_STORED, (
                        f"{self.config.name} sent a requestState over "
                        f"{REQUEST_STATE_BYTES // 1024 // 1024} MiB for {tool}: it is not "
                        "stored, so its form cannot be resumed after dsh stops")))
                responses = await self._answer_inputs(session, tool, result, keep=keep)
            else:  # only state: the server is working; ask again shortly
                responses = None
                await asyncio.sleep(STATE_ONLY_PAUSE)
        raise ToolError(f"{tool} on {self.config.name} asked for input more than "
                        f"{MAX_INPUT_ROUNDS} times", MCP_TOOL_ERROR)

    async def _answer_inputs(self, session: Any, tool: str, result: InputRequiredResult,
                             *, keep: bool = True) -> dict[str, Any]:
        """All of a round's elicitations in one batch, stored with the round (unless not
        ``keep``: its state is too big to store); sampling and roots as the SDK would."""
        from mcp.client.session import ClientRequestContext
        from mcp.shared.exceptions import MCPError
        from mcp_types import ElicitRequest, ErrorData

        requests = result.input_requests or {}
        elicit = {key: request.params for key, request in requests.items()
                  if self._elicits and isinstance(request, ElicitRequest)}
        responses: dict[str, Any] = {}
        if elicit:
            continuation = (Continuation.of(self.config.name, self.config.endpoint, tool,
                                            result).to_json() if keep else None)
            answered = await self.elicitor.answer(elicit, continuation)
            if isinstance(answered, ErrorData):
                raise MCPError.from_error_data(answered)
            responses.update(answered)
        for key, request in requests.items():
            if key in elicit:
                continue
            context = ClientRequestContext(session=session, request_id=key)
            response = await session.dispatch_input_request(context, request)
            if isinstance(response, ErrorData):
                raise MCPError.from_error_data(response)
            responses[key] = response
        return responses

    def _log(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed log loses a notice, no more
            self.errlog.write(line + "\n")
            self.errlog.flush()

    async def close(self) -> None:
        """Ask the connection task to end; cancel it if it does not within a grace period."""
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is None:
            return
        # asyncio.wait, not a shielded wait_for: a task already cancelled (a close after a
        # start that timed out) would raise its CancelledError here, past every handler
        await asyncio.wait({task}, timeout=CLOSE_GRACE_SECONDS)
        await close_task(task)


async def _list_all_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(100):  # a server that pages forever is cut off, not followed
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _storable(state: str | None) -> bool:
    """Whether a round's ``requestState`` is small enough to store with its batch."""
    return state is None or (len(state) <= REQUEST_STATE_BYTES // 4  # bytes <= 4 x chars
                             or len(state.encode("utf-8", "replace")) <= REQUEST_STATE_BYTES)


def _is_protocol_error(error: BaseException) -> bool:
    """A JSON-RPC error the server answered with: it runs, but refused the call. A closed
    connection comes as an ``MCPError`` too, with the SDK's ``CONNECTION_CLOSED`` code."""
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import CONNECTION_CLOSED

    return isinstance(error, MCPError) and error.error.code != CONNECTION_CLOSED


def _misfit(error: BaseException) -> str | None:
    """A result the SDK could not read, in one line: where it first misfits, without the
    server's values (a pydantic dump quotes them); None for any other error."""
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return None
    first = error.errors(include_url=False, include_input=False)[0]
    where = one_line(".".join(str(part)[:40] for part in first["loc"]), 200)
    return f"its result does not fit the MCP schema ({where}: {first['msg'][:120]})"


def _login_required(error: BaseException) -> LoginRequired | None:
    """The ``auth.LoginRequired`` the start failed on (a login this process may not do)."""
    from dsh_cli.mcp_client.auth.login_required import LoginRequired

    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error if isinstance(error, LoginRequired) else None


def _login_line(name: str, needed: LoginRequired | None) -> str:
    """What ``MCP_AUTH_REQUIRED`` says: which login to run, and why when it is not plain."""
    if needed is not None and needed.login_cannot_help:
        return f"{name} cannot log in: {needed}"
    if needed is not None and needed.scope:
        return f"{name} needs a broader login (scope {needed.scope}): run dsh mcp login {name}"
    return f"{name} needs a login: run dsh mcp login {name}"


def _forbidden(response: Any) -> str:
    """A 403 in one line: its ``WWW-Authenticate`` error, scope and description, which the
    server wrote (sanitised, cut)."""
    from mcp.client.auth.utils import extract_field_from_www_auth

    from dsh_cli.interaction import sanitize

    fields = {key: extract_field_from_www_auth(response, key)
              for key in ("error", "scope", "error_description")}
    said = fields["error"] or "403 Forbidden"
    if fields["scope"]:
        said += f" (scope {fields['scope']})"
    if fields["error_description"]:
        said += f": {fields['error_description']}"
    return "the server refused the token: " + " ".join(sanitize(said).split())[:300]


def _describe(error: BaseException) -> str:
    """One line: nested exception groups unwrapped to their first real cause."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]
