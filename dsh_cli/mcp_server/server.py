"""The MCP server of ``dsh mcp``: ``ask_user_question``, ``get_user_answer`` and
``approve_tool_use``, on stdio or HTTP.

Built on the SDK's low-level ``Server`` (the layer ``MCPServer`` itself stands on) so the
tool's input schema is exactly the model-facing one (``dsh schema``), not a schema derived
from a Python signature, and its arguments reach dsh's own forgiving decoder unchanged.
The SDK serves both protocol eras. A call the agent cancels (``notifications/cancelled``,
or the client going away) aborts its batch, which the desks then drop. An async batch's
ticket belongs to the session that asked (``session_owner``) and ends with it.

A call becomes an MCP task only when it does not wait: an async question, for a client that
can take a task (its result then says it is the human's answer), and ``approve_tool_use``
where the client asks for one. A question that waits holds the call for every client, so
an agent that backgrounds tasks cannot move it aside and work on without the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_cli import __version__
from dsh_cli.core.limits import AGENT_NAME_CHARACTERS as MAX_AGENT_NAME
from dsh_cli.core.signal import AbortSignal

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

    from dsh_cli.mcp_server.approve import ApproveService
    from dsh_cli.mcp_server.owned.work import LaterWork
    from dsh_cli.mcp_server.service import AskService
    from dsh_cli.mcp_server.tasks.store import Tasks
    from dsh_cli.mcp_server.tickets import Tickets
    from dsh_cli.tools.registry import ToolResult

__all__ = ["AGENT_NAMES", "Caller", "CallerOf", "agent_name", "approve_result", "build_server",
           "call_result", "output_schema", "serve_asgi", "serve_http", "serve_stdio",
           "session_owner", "told_wire"]

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
    """``ask_user_question``'s ``outputSchema``: the answer batch, the error object, an
    async call's ticket, or an async call's outcome as its MCP task's result.

    An error result carries ``{"error": …}`` as ``structuredContent`` too, and the
    TypeScript SDK's client (Claude Code, the Inspector, …) validates *every*
    ``structuredContent`` against the schema, so the schema must admit all three; the
    answer is ``dsh schema --answer`` unchanged.
    """
    from dsh_cli.interaction import AskUserQuestionAnswer

    answer = AskUserQuestionAnswer.model_json_schema()
    definitions = answer.pop("$defs", {})
    failure: dict[str, Any] = {"type": "object", "required": ["code", "message"],
                               "properties": {"name": {"type": "string"},
                                              "code": {"type": "string"},
                                              "message": {"type": "string"}}}
    error = {"type": "object", "title": "ToolErrorResult", "required": ["error"],
             "properties": {"error": failure}}
    accepted = {"type": "object", "title": "TicketAccepted", "required": ["accepted", "ticket"],
                "properties": {"accepted": {"const": True}, "ticket": {"type": "string"}}}
    # Claude Code shows its model a task result's structuredContent, not its text, so the
    # sentence saying whose answer it is travels in it too
    told = {"type": "object", "title": "TaskOutcome", "required": ["told", "ticket"],
            "properties": {"told": {"type": "string"}, "ticket": {"type": "string"},
                           "answers": answer["properties"]["answers"],
                           "error": failure}}
    return {"type": "object",
            "$defs": {**definitions, "AskUserQuestionAnswer": answer, "ToolErrorResult": error,
                      "TicketAccepted": accepted, "TaskOutcome": told},
            "anyOf": [{"$ref": "#/$defs/AskUserQuestionAnswer"},
                      {"$ref": "#/$defs/ToolErrorResult"},
                      {"$ref": "#/$defs/TicketAccepted"},
                      {"$ref": "#/$defs/TaskOutcome"}]}


def call_result(result: ToolResult) -> Any:
    """The MCP result: text and ``structuredContent`` carry the same JSON object."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=result.content)],
                          structured_content=json.loads(result.content),
                          is_error=result.is_error)


def told_result(result: ToolResult, sentence: str, ticket: str) -> Any:
    """An async batch's outcome as its task's result: text and ``structuredContent`` both
    say whose answer it is, and when, before the outcome itself."""
    from mcp.types import CallToolResult, TextContent

    told = {"told": sentence, "ticket": ticket, **json.loads(result.content)}
    return CallToolResult(content=[TextContent(type="text", text=f"{sentence} {result.content}")],
                          structured_content=told, is_error=result.is_error)


def told_wire(outcome: ToolResult, sentence: str, ticket: str) -> dict[str, Any]:
    """An async batch's outcome as its MCP task keeps it (``told_result``, as a wire dict)."""
    return _wire(told_result(outcome, sentence, ticket))


# Claude Code shows a task's creation ``_meta[AGENT_TASK].modelImmediateResponse`` to its
# model as the server's note (up to 20,000 characters)
AGENT_TASK = "com.anthropic/agent-task"


def immediate_note(ticket: str) -> str:
    """What the model is told when its async question becomes a task: what will happen."""
    return (f"Your question (ticket {ticket}) is at the human's dsh desk, and the human answers "
            "it there when they can. Work on with what does not need the answer. The answer "
            "arrives later, as this task's result, and it is the human's answer to this "
            "question (get_user_answer with the ticket fetches it too).")


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
    from dsh_cli.core.sanitize import one_line

    if not isinstance(client_name, str) or not client_name.strip():
        return None
    known = AGENT_NAMES.get(client_name.strip())
    return known or one_line(client_name, MAX_AGENT_NAME) or None


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    params = ctx.session.client_params
    info = getattr(params, "client_info", None)
    return agent_name(getattr(info, "name", None) if info is not None else None)


def session_owner(ctx: ServerRequestContext[Any, Any], later: LaterWork) -> str | None:
    """Whose tickets and MCP tasks a call sees (``owned.request_owner``); a session's go when
    the session ends (``later``: the one store of both)."""
    from dsh_cli.mcp_server.owned import on_session_end, request_owner

    owner = request_owner(ctx)
    if owner is not None:
        on_session_end(ctx, owner, "later", later.close_owner)
    return owner


@dataclass(frozen=True)
class Caller:
    """Who makes a request, as a serving hub knows it (``hub/app.py``): the ``source`` its
    batches are labelled with at the desks, and the ``owner`` of its tickets and tasks."""

    source: dict[str, Any]
    owner: str


# a request's caller from its context and its client's name (``clientInfo``); None: the
# process's own, as ``dsh mcp`` labels it (its cwd and pid, work owned by the session)
CallerOf = Callable[[Any, str | None], Caller | None]


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


def build_server(service: AskService, approver: ApproveService | None = None, *,
                 caller_of: CallerOf | None = None,
                 tasks: Callable[..., Tasks] | None = None) -> Server[Any]:
    """The low-level server: ``service``'s tool, and ``approve_tool_use`` with ``approver``;
    ``caller_of`` (a hub) says who each request's caller is, ``tasks`` (a hub's) how its
    MCP tasks are read.

    An async question runs as an MCP task for a client that takes them, and
    ``approve_tool_use`` where a 2025 client asks for one (``dsh_cli.mcp_server.tasks``).
    """
    from mcp.server import Server
    from mcp.types import ListToolsResult, Tool, ToolExecution

    from dsh_cli.mcp_server import get_user_answer as answers
    from dsh_cli.mcp_server.approve import approve_tool_spec
    from dsh_cli.mcp_server.tasks import Staged, install_tasks
    from dsh_cli.mcp_server.tasks.store import Tasks as TaskView
    from dsh_cli.tools.ask_user_question import decode_call

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

    def caller(ctx: Any) -> tuple[str | None, str | None, dict[str, Any] | None]:
        """A request's client name, the owner of its work, and its batches' source."""
        client = _client_name(ctx)
        known = caller_of(ctx, client) if caller_of is not None else None
        if known is not None:
            return client, known.owner, known.source
        return client, session_owner(ctx, later), None

    def work_for(ctx: Any, name: str, arguments: Any, *,
                 progress: bool = False) -> Callable[[AbortSignal], Awaitable[Any]] | None:
        """The call of tool ``name``, to run with an abort signal; None for an unknown tool."""
        client, owner, source = caller(ctx)
        if name == spec["name"]:
            session = ctx.session

            async def report(done: float, total: float | None, message: str | None) -> None:
                await session.report_progress(done, total, message)

            async def ask(signal: AbortSignal) -> Any:
                return call_result(await service.ask(arguments, client=client, signal=signal,
                                                     progress=report if progress else None,
                                                     owner=owner, source=source))
            return ask
        if approver is not None and name == approve_tool_spec()["name"]:
            async def approve_call(signal: AbortSignal) -> Any:
                return approve_result(await approver.approve(arguments, client=client,
                                                             signal=signal, source=source))
            return approve_call
        return None

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        from dsh_cli.core.errors import UNKNOWN_TOOL, ToolError
        from dsh_cli.interaction.traits import seen_of
        from dsh_cli.tools.registry import ToolResult

        arguments = params.arguments if params.arguments is not None else {}
        work = work_for(ctx, params.name, arguments, progress=True)
        if work is not None:
            return await _abortable(work)
        if params.name == fetch["name"]:  # a cancel ends the wait, never the question
            return call_result(await answers.get_user_answer(
                service.tickets, arguments, caller(ctx)[1],
                seen_of(service.ui.provider)))
        error = ToolError(f"unknown tool {params.name!r} (available: {', '.join(by_name)})",
                          UNKNOWN_TOOL)
        return call_result(ToolResult.failure(error))

    def input_schema(name: str) -> Any:
        tool = by_name.get(name)
        return tool.input_schema if tool is not None else None

    server = Server("dsh", version=__version__, instructions=INSTRUCTIONS,
                    get_tool_input_schema=input_schema,
                    on_list_tools=list_tools, on_call_tool=call_tool)

    def task_work(ctx: Any, name: str, arguments: Any, *, asked: bool) -> Any:
        """A task only for a call that does not wait (see the module's docstring)."""
        if name == spec["name"]:
            return told_ask(ctx, arguments) if _asks_async(decode_call, arguments) else None
        work = work_for(ctx, name, arguments) if asked else None  # no progress: answered
        if work is None:
            return None

        async def wire(signal: AbortSignal) -> dict[str, Any]:
            return _wire(await work(signal))
        return wire

    def told_ask(ctx: Any, arguments: Any) -> Staged:
        """An async question as a task: asked first (a refusal answers the call plainly),
        then the task waits for its outcome, told as the human's answer."""
        client, owner, source = caller(ctx)
        ticket: list[str] = []
        signal = AbortSignal()  # the batch's and its task's: an answer seals both at once

        async def start() -> Any:
            result = await service.ask(arguments, client=client, signal=signal,
                                       owner=owner, told=True, source=source)
            if result.is_error:  # a bad batch, no desk, no session: no task is made
                return call_result(result)
            ticket.append(json.loads(result.content)["ticket"])

            async def work(signal: AbortSignal) -> dict[str, Any]:
                assert owner is not None  # an async batch was made, so its owner is known
                outcome, sentence = await service.outcome_of(ticket[0], owner, signal)
                return told_wire(outcome, sentence, ticket[0])
            return work

        def abandon() -> None:
            if ticket and owner is not None:
                service.forget_told(ticket[0], owner)

        return Staged(start, meta=lambda: {AGENT_TASK: {
            "modelImmediateResponse": immediate_note(ticket[0])}}, abandon=abandon,
            signal=signal, ticket=lambda: ticket[0] if ticket else None)

    # a 2025-11-25 task belongs to the session a ticket would (one decision: session_owner),
    # kept in the tickets' store, so the session's end closes its tickets and tasks together
    later = service.tickets.store

    def sessionless_owner(ctx: Any) -> str | None:
        """A 2026-07-28 task's owner: a hub's caller (its agent token, so any hub process
        finds the task); else None, the wire's one owner."""
        known = caller_of(ctx, None) if caller_of is not None else None
        return known.owner if known is not None else None

    install_tasks(server, task_work, owner_of=lambda ctx: caller(ctx)[1], later=later,
                  sessionless_owner=sessionless_owner, view=tasks or TaskView)
    return server


def _asks_async(decode: Callable[[Any], Any], arguments: Any) -> bool:
    """Whether a valid call asks with ``delivery: "async"`` (a bad one is refused plainly)."""
    from dsh_cli.core.errors import HarnessError

    try:
        return bool(decode(arguments).delivery == "async")
    except HarnessError:
        return False


def _wire(result: Any) -> dict[str, Any]:
    """A ``CallToolResult`` as a task keeps it: the wire dict."""
    return dict(result.model_dump(by_alias=True, mode="json", exclude_none=True))


def _later_work(server: Server[Any], tickets: Tickets | None) -> LaterWork:
    """The one store of the server's tickets and tasks (whether an owner holds work)."""
    from dsh_cli.mcp_server.owned.work import LaterWork
    from dsh_cli.mcp_server.tasks import TaskLayer

    stores = {id(store): store for store in [
        *(layer.tasks.store for layer in server.middleware if isinstance(layer, TaskLayer)),
        *([tickets.store] if tickets is not None else [])]}
    if len(stores) > 1:  # a session would be closed for room while it holds work
        raise ValueError("the tickets and the tasks of one server are kept in one store")
    return next(iter(stores.values()), LaterWork())


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
                     announce: Callable[[str], None],
                     tickets: Tickets | None = None) -> None:
    """Streamable HTTP on 127.0.0.1; ``announce`` gets the URL (with its token) once bound.
    A session holding ``tickets`` or tasks is never closed to make room for another."""
    import secrets

    from mcp.server.transport_security import TransportSecuritySettings

    from dsh_cli.mcp_server.http_door import MAX_SESSIONS, TokenGate
    from dsh_cli.mcp_server.owned import owner_of_session

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
    later = _later_work(server, tickets)  # a session holding work is never closed for room
    gate = TokenGate(app, token, path="/mcp", host=f"127.0.0.1:{port}",
                     holds=lambda session: later.holds(owner_of_session(session)))
    await serve_asgi(server, gate, sock,
                     started=lambda: announce(f"http://127.0.0.1:{port}/{token}/mcp"))


async def serve_asgi(server: Server[Any], app: Any, sock: socket.socket, *,
                     started: Callable[[], None],
                     stopping: Callable[[], None] | None = None) -> None:
    """Serve ``app`` (``server``'s Streamable HTTP app, behind its door) on the bound
    ``sock`` until cancelled; ``started`` is called once it accepts connections. A cancel
    (ctrl-c, SIGTERM) calls ``stopping`` (to end the app's own endless streams) and lets
    uvicorn end its connections within ``GRACE_SECONDS``."""
    import uvicorn

    from dsh_cli.mcp_server.tasks import close_tasks
    from dsh_cli.mcp_server.tasks.layer import end_listeners

    config = uvicorn.Config(app, log_config=None,
                            log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=1)
    from dsh_cli.providers.web.server import embedded_server  # signals stay dsh's

    stderr = _StderrLines()
    uvicorn_server = embedded_server(config, stderr.say)
    serving = asyncio.ensure_future(uvicorn_server.serve(sockets=[sock]))
    while not uvicorn_server.started and not serving.done():
        await asyncio.sleep(0.01)
    if serving.done():
        stderr.close()
        serving.result()
        return
    started()
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        # ctrl-c or SIGTERM: let uvicorn shut down as it would on its own signal (a cancel
        # in the middle of its lifespan prints the app's traceback on stderr); a 2026 listen
        # stream never ends on its own, so it is ended first, not cut at the grace's end
        end_listeners(server)
        if stopping is not None:
            stopping()
        uvicorn_server.should_exit = True
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(serving, GRACE_SECONDS)
        raise
    finally:
        await asyncio.shield(close_tasks(server))
        stderr.close()


class _StderrLines:
    """Lines on stderr from the HTTP server that never block the loop (a pipe nobody reads)."""

    def __init__(self) -> None:
        import sys

        from dsh_cli.providers.pipe_writer import PipeWriter, descriptor_of

        fd = descriptor_of(sys.stderr)
        self._pipe = PipeWriter(fd) if fd is not None else None

    def say(self, text: str) -> None:
        import sys

        if self._pipe is not None:
            self._pipe.write(text.encode("utf-8", "replace"))
            return
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(text)

    def close(self) -> None:
        if self._pipe is not None:
            self._pipe.close()
