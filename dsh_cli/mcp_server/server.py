"""The MCP server of ``dsh mcp``: ``ask_user_question``, ``get_user_answer`` and
``approve_tool_use``, on stdio or HTTP.

Built on the SDK's low-level ``Server`` (the layer ``MCPServer`` itself stands on) so the
tool's input schema is exactly the model-facing one (``dsh schema``), not a schema derived
from a Python signature, and its arguments reach dsh's own forgiving decoder unchanged.
The SDK serves both protocol eras. A call the agent cancels (``notifications/cancelled``,
or the client going away) aborts its batch, which the desks then drop. An async batch's
ticket belongs to the session that asked (``session_owner``) and ends with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_cli import __version__
from dsh_cli.core.limits import AGENT_NAME_CHARACTERS as MAX_AGENT_NAME
from dsh_cli.core.signal import AbortSignal

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

    from dsh_cli.mcp_server.approve import ApproveService
    from dsh_cli.mcp_server.service import AskService
    from dsh_cli.mcp_server.tickets import TicketStore
    from dsh_cli.tools.registry import ToolResult

__all__ = ["AGENT_NAMES", "agent_name", "approve_result", "build_server", "call_result",
           "output_schema", "serve_http", "serve_stdio", "session_owner"]

INSTRUCTIONS = (
    "ask_user_question asks the human structured questions (numbered options, multi-select, "
    "free text) at their dsh desk and returns the answers. A result with isError carries "
    "{error: {code}}: NO_PROVIDER means no human is at the desk; ASK_CANCELLED means the "
    "human dismissed the questions. With delivery 'async' it returns a ticket at once; "
    "get_user_answer returns that ticket's answers, or pending, or the error. "
    "approve_tool_use asks the human whether one of your tool calls may run (Claude Code's "
    "--permission-prompt-tool contract)."
)


def output_schema() -> dict[str, Any]:
    """``ask_user_question``'s ``outputSchema``: the answer batch, the error object, or an
    async call's ticket.

    An error result carries ``{"error": …}`` as ``structuredContent`` too, and the
    TypeScript SDK's client (Claude Code, the Inspector, …) validates *every*
    ``structuredContent`` against the schema, so the schema must admit all three; the
    answer is ``dsh schema --answer`` unchanged.
    """
    from dsh_cli.interaction import AskUserQuestionAnswer

    answer = AskUserQuestionAnswer.model_json_schema()
    definitions = answer.pop("$defs", {})
    error = {"type": "object", "title": "ToolErrorResult", "required": ["error"],
             "properties": {"error": {"type": "object", "required": ["code", "message"],
                                      "properties": {"name": {"type": "string"},
                                                     "code": {"type": "string"},
                                                     "message": {"type": "string"}}}}}
    accepted = {"type": "object", "title": "TicketAccepted", "required": ["accepted", "ticket"],
                "properties": {"accepted": {"const": True}, "ticket": {"type": "string"}}}
    return {"type": "object",
            "$defs": {**definitions, "AskUserQuestionAnswer": answer, "ToolErrorResult": error,
                      "TicketAccepted": accepted},
            "anyOf": [{"$ref": "#/$defs/AskUserQuestionAnswer"},
                      {"$ref": "#/$defs/ToolErrorResult"},
                      {"$ref": "#/$defs/TicketAccepted"}]}


def call_result(result: ToolResult) -> Any:
    """The MCP result: text and ``structuredContent`` carry the same JSON object."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=result.content)],
                          structured_content=json.loads(result.content),
                          is_error=result.is_error)


def approve_result(outcome: dict[str, Any]) -> Any:
    """``approve_tool_use``'s result: the contract's JSON as the text (what Claude Code reads)."""
    from mcp.types import CallToolResult, TextContent

    text = json.dumps(outcome, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)])


# ``clientInfo.name`` as the agents send it (Codex: CODEX_MCP_CLIENT_NAME in codex-rs),
# and the name people know them by
AGENT_NAMES = {"claude-code": "Claude Code", "codex-mcp-client": "Codex",
               "gemini-cli-mcp-client": "Gemini CLI"}


def agent_name(client_name: str | None) -> str | None:
    """The agent as people know it; an unknown name sanitised and cut, as given."""
    from dsh_cli.core.sanitize import sanitize_line

    if not isinstance(client_name, str) or not client_name.strip():
        return None
    known = AGENT_NAMES.get(client_name.strip())
    return known or sanitize_line(client_name.strip())[:MAX_AGENT_NAME] or None


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    params = ctx.session.client_params
    info = getattr(params, "client_info", None)
    return agent_name(getattr(info, "name", None) if info is not None else None)


def session_owner(ctx: ServerRequestContext[Any, Any], tickets: TicketStore, *,
                  ended: Callable[[str], None] | None = None) -> str | None:
    """Whose tickets (and MCP tasks) a call sees: the stdio process's, or its Streamable
    HTTP session's (``mcp-session-id``, the public header every 2025 request after
    ``initialize`` carries).

    A session's tickets go when the session ends (a ``DELETE``, the gate closing the idlest,
    the SDK's idle timeout), not when a connection drops: a client that reconnects with
    its session id gets its outcomes; ``ended(owner)`` is told then too (the tasks' store).
    A 2026-07-28 HTTP request has no session, so those requests share one owner: the
    unguessable ticket, behind the URL's token, is the key. None when a 2025 HTTP request
    names no session: ownership fails closed (no ticket, no task).
    """
    if ctx.request is None:
        return "stdio"
    headers = getattr(ctx.request, "headers", None)
    session_id = headers.get(SESSION_HEADER) if headers is not None else None
    if not session_id:
        return "http" if _sessionless(ctx.protocol_version) else None
    owner = f"http:{session_id}"
    # the session's end closes its tickets: the SDK hands a handler no public way to the
    # connection's exit stack (``sdk_private.py`` lists the name; a test checks it)
    connection = getattr(ctx.session, "_connection", None)
    if connection is not None and connection.session_id == session_id \
            and not connection.state.get("dsh_tickets"):  # once per session
        connection.state["dsh_tickets"] = True
        connection.exit_stack.push_async_callback(tickets.close_owner, owner)
    if ended is not None and connection is not None and connection.session_id == session_id \
            and not connection.state.get("dsh_tasks"):
        connection.state["dsh_tasks"] = True
        connection.exit_stack.callback(ended, owner)
    return owner


SESSION_HEADER = "mcp-session-id"  # the Streamable HTTP session of a 2025 request


def _sessionless(protocol_version: str) -> bool:
    """Whether ``protocol_version`` is of the era with no sessions (2026-07-28 on)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return protocol_version in MODERN_PROTOCOL_VERSIONS


async def _abortable(work: Callable[[AbortSignal], Awaitable[Any]]) -> Any:
    """Run ``work``; the agent cancelling or going away aborts it, and waits for it to end."""
    import anyio

    signal = AbortSignal()
    task = asyncio.ensure_future(work(signal))
    try:
        return await asyncio.shield(task)
    except BaseException:
        # The agent cancelled or went away: the batch is aborted, the desks drop it.
        signal.abort("the agent cancelled the call")
        with anyio.CancelScope(shield=True):
            await asyncio.wait({task})
        raise


def build_server(service: AskService, approver: ApproveService | None = None) -> Server[Any]:
    """The low-level server: ``service``'s tool, and ``approve_tool_use`` with ``approver``.

    Both tools may run as MCP tasks (``dsh_cli.mcp_server.tasks``), in either era.
    """
    from mcp.server import Server
    from mcp.types import ListToolsResult, Tool, ToolExecution

    from dsh_cli.mcp_server import get_user_answer as answers
    from dsh_cli.mcp_server.approve import approve_tool_spec
    from dsh_cli.mcp_server.tasks import install_tasks

    spec = service.tool_spec()
    fetch = answers.tool_spec()
    # both asking tools may run as tasks; get_user_answer needs none (its wait is capped)
    optional = ToolExecution(task_support="optional")
    tools = [Tool(name=spec["name"], description=spec["description"],
                  input_schema=spec["parameters"], output_schema=output_schema(),
                  execution=optional),
             Tool(name=fetch["name"], description=fetch["description"],
                  input_schema=fetch["parameters"],
                  output_schema=answers.output_schema(output_schema()))]
    if approver is not None:
        approve = approve_tool_spec()
        tools.append(Tool(name=approve["name"], description=approve["description"],
                          input_schema=approve["parameters"], execution=optional))
    by_name = {tool.name: tool for tool in tools}

    def work_for(ctx: Any, name: str, arguments: Any, *,
                 progress: bool = False) -> Callable[[AbortSignal], Awaitable[Any]] | None:
        """The call of tool ``name``, to run with an abort signal; None for an unknown tool."""
        client = _client_name(ctx)
        if name == spec["name"]:
            session = ctx.session

            async def report(done: float, total: float | None, message: str | None) -> None:
                await session.report_progress(done, total, message)

            owner = session_owner(ctx, service.tickets)

            async def ask(signal: AbortSignal) -> Any:
                return call_result(await service.ask(arguments, client=client, signal=signal,
                                                     progress=report if progress else None,
                                                     owner=owner))
            return ask
        if approver is not None and name == approve_tool_spec()["name"]:
            async def approve_call(signal: AbortSignal) -> Any:
                return approve_result(await approver.approve(arguments, client=client,
                                                             signal=signal))
            return approve_call
        return None

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        from dsh_cli.core.errors import UNKNOWN_TOOL, ToolError
        from dsh_cli.tools.registry import ToolResult

        arguments = params.arguments if params.arguments is not None else {}
        work = work_for(ctx, params.name, arguments, progress=True)
        if work is not None:
            return await _abortable(work)
        if params.name == fetch["name"]:  # a cancel ends the wait, never the question
            return call_result(await answers.get_user_answer(
                service.tickets, arguments, session_owner(ctx, service.tickets),
                getattr(service.ui.provider, "seen", None)))
        error = ToolError(f"unknown tool {params.name!r} (available: {', '.join(by_name)})",
                          UNKNOWN_TOOL)
        return call_result(ToolResult.failure(error))

    def input_schema(name: str) -> Any:
        tool = by_name.get(name)
        return tool.input_schema if tool is not None else None

    server = Server("dsh", version=__version__, instructions=INSTRUCTIONS,
                    get_tool_input_schema=input_schema,
                    on_list_tools=list_tools, on_call_tool=call_tool)

    def task_work(ctx: Any, name: str, arguments: Any) -> Any:
        work = work_for(ctx, name, arguments)  # no progress: the request has been answered
        if work is None:
            return None

        async def wire(signal: AbortSignal) -> dict[str, Any]:
            result = await work(signal)
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return wire

    # a 2025-11-25 task belongs to the session a ticket would (one decision: session_owner)
    install_tasks(server, task_work, owner_of=lambda ctx, ended: session_owner(
        ctx, service.tickets, ended=ended))
    return server


class _StdinLines:
    """stdin's lines for the SDK's stdio transport, read by a daemon thread.

    The SDK reads stdin in a worker thread that a cancel must wait for, so SIGTERM would
    wait for the agent to close stdin; a ``LineReader``'s wait is cancellable at once.
    """

    def __init__(self) -> None:
        import sys

        from dsh_cli.providers.line_reader import LineReader

        self._lines = LineReader(sys.stdin.buffer)

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        line = await self._lines.readline()
        if line is None:
            raise StopAsyncIteration
        return line

    def close(self) -> None:
        self._lines.close()


async def serve_stdio(server: Server[Any]) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin or a signal ends it."""
    from mcp.server.stdio import stdio_server

    from dsh_cli.mcp_server.tasks import close_tasks

    stdin = _StdinLines()
    try:
        # stdout stays the SDK's: it points fd 1 at stderr so stray output misses the wire
        async with stdio_server(stdin=stdin) as (read_stream,  # type: ignore[arg-type]
                                                 write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        stdin.close()
        await close_tasks(server)


GRACE_SECONDS = 3.0  # how long a stopping HTTP server may take to close its connections


async def serve_http(server: Server[Any], *, port: int = 0,
                     announce: Callable[[str], None]) -> None:
    """Streamable HTTP on 127.0.0.1; ``announce`` gets the URL (with its token) once bound."""
    import secrets

    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from dsh_cli.mcp_server.http_door import MAX_SESSIONS, TokenGate

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"])
    # the gate closes the idlest session to make room; the SDK's cap (a 503) is the backstop
    app = server.streamable_http_app(streamable_http_path="/mcp", transport_security=security,
                                     host="127.0.0.1", max_sessions=MAX_SESSIONS)
    from dsh_cli.mcp_server.tasks import close_tasks
    from dsh_cli.mcp_server.tasks.layer import end_listeners

    gate = TokenGate(app, token, path="/mcp", host=f"127.0.0.1:{port}")
    config = uvicorn.Config(gate, log_config=None,
                            log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=1)
    from dsh_cli.providers.web.server import embedded_server  # signals stay dsh's

    uvicorn_server = embedded_server(config)
    serving = asyncio.ensure_future(uvicorn_server.serve(sockets=[sock]))
    while not uvicorn_server.started and not serving.done():
        await asyncio.sleep(0.01)
    if serving.done():
        serving.result()
        return
    announce(f"http://127.0.0.1:{port}/{token}/mcp")
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        # ctrl-c or SIGTERM: let uvicorn shut down as it would on its own signal (a cancel
        # in the middle of its lifespan prints the app's traceback on stderr); a 2026 listen
        # stream never ends on its own, so it is ended first, not cut at the grace's end
        end_listeners(server)
        uvicorn_server.should_exit = True
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(serving, GRACE_SECONDS)
        raise
    finally:
        await asyncio.shield(close_tasks(server))
