"""A session's tools beyond ``ask_user_question``: MCP servers, and the permission gate.

Two halves, like the answer-source table: ``plan_tools`` (sync, before a session opens)
finds the configured servers and the rules, so a bad file is ``CONFIG_ERROR`` before
anything starts; ``session_tools`` (async, around the conversation) starts the servers,
registers their tools on the session's ``ToolRegistry``, puts the permission policy in
front of ``execute`` and closes the servers on the way out, however the block ends:

    plan = plan_tools(settings, options, sys.stderr)
    async with session_tools(runtime, plan, sys.stderr) as gate:
        ...  # gate is None when no server is configured; else the door registers on it

With no server configured, nothing MCP is imported, and nothing of ``dsh_cli.permissions``
unless rules were given (a rule that can match nothing is still reported).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dsh_cli.core.errors import MCP_UNAVAILABLE, format_line
from dsh_cli.core.lines import notice, warning

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.mcp_client.config.servers import ServerConfig
    from dsh_cli.mcp_client.forms.asking import UrlAsker
    from dsh_cli.permissions import PermissionGate, Rules
    from dsh_cli.runtime import Runtime

__all__ = ["LOG_FILE", "NOTES_FOLDER", "YES_NOTICE", "ToolPlan", "plan_tools", "session_tools"]

LOG_FILE = "mcp.log"  # in the data directory: the servers' stderr, never the screen (capped)
NOTES_FOLDER = "notes"  # in the data directory: ``dsh demo``'s notes server keeps them here
YES_NOTICE = notice("--yes: every tool call of this run is allowed without asking")


@dataclass(frozen=True)
class ToolPlan:
    """The servers to start and the rules their calls pass (config, then flags)."""

    servers: list[ServerConfig] = field(default_factory=list)
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    allow_all: bool = False
    shared: frozenset[str] = frozenset()  # the rules of config.toml: approve_tool_use's too

    def rules(self) -> Rules:
        from dsh_cli.permissions import Rules

        return Rules(self.allow, self.ask, self.deny, self.allow_all)


def plan_tools(settings: Settings, options: Mapping[str, Any], stderr: TextIO, *,
               demo: bool = False, cwd: Path | None = None,
               environ: Mapping[str, str] | None = None) -> ToolPlan:
    """What ``--mcp-config``, ``--mcp-project``, ``--no-mcp``, ``--allow``, ``--deny`` and
    ``--yes`` (and ``dsh demo``'s notes server) ask for; raises ``ConfigError``."""
    from dsh_cli.config import config_dir, data_dir

    yes = bool(options.get("yes"))
    if yes:
        _line(stderr, YES_NOTICE)
    plan = ToolPlan(allow=(*settings.allow, *options.get("allow", ())), ask=settings.ask,
                    deny=(*settings.deny, *options.get("deny", ())), allow_all=yes,
                    shared=frozenset((*settings.allow, *settings.ask, *settings.deny)))
    if options.get("no_mcp"):
        return plan
    from dsh_cli.mcp_client.config.configured import configured_servers
    from dsh_cli.mcp_client.config.servers import parse_servers

    servers = []
    if demo:
        from dsh_cli.demo_notes import SERVER_NAME, entry

        notes = {"mcpServers": {SERVER_NAME: entry(data_dir() / NOTES_FOLDER)}}
        servers = parse_servers(notes, "dsh demo", {})
    configured = configured_servers(
        options.get("mcp_config", ()), project=bool(options.get("mcp_project")),
        cwd=cwd or Path.cwd(), config_dir=config_dir(), environ=environ,
        notice=lambda line: _line(stderr, line))
    if configured:
        named = {server.name: server for server in (*servers, *configured)}
        servers = list(named.values())
    for server in servers:
        if server.unset:
            names = ", ".join(f"${{{name}}}" for name in server.unset)
            _line(stderr, warning(f"server {server.name!r} of {server.source}: {names} "
                                  "not set, so expanded to nothing"))
    return ToolPlan(servers, plan.allow, plan.ask, plan.deny, plan.allow_all, plan.shared)


@contextlib.asynccontextmanager
async def session_tools(runtime: Runtime, plan: ToolPlan, stderr: TextIO, *,
                        can_answer: bool = True,
                        url_asker: UrlAsker | None = None
                        ) -> AsyncIterator[PermissionGate | None]:
    """The plan's servers started and their tools offered; the gate their calls pass.

    ``can_answer``: the session has an answer source, so the servers may ask the human
    (elicitation, ``spec/mcp.md`` section 3) and dsh declares the capability; without one
    a server is told nothing can answer and goes on without asking. ``url_asker``: the
    front door shows URL requests itself (``dsh acp`` with a client's URL mode).
    """
    if not plan.servers:
        if plan.allow or plan.ask or plan.deny:
            _warn_rules(plan, {}, stderr)
        yield None
        return
    import dsh_cli
    from dsh_cli.config import config_dir, data_dir
    from dsh_cli.core.home import approvals_file
    from dsh_cli.mcp_client.toolset import McpToolset
    from dsh_cli.mcp_client.transport.server_log import ServerLog, sdk_logs_to
    from dsh_cli.permissions import Approvals, PermissionGate
    from dsh_cli.tools.permission_policy import permission_policy

    with contextlib.ExitStack() as stack:
        folder = data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        errlog = stack.enter_context(ServerLog(folder / LOG_FILE))
        stack.enter_context(sdk_logs_to(errlog))
        toolset = await McpToolset.start(
            plan.servers, errlog=errlog, client_version=dsh_cli.__version__,
            auth_dir=config_dir(),
            elicitation=runtime.ui if can_answer else None, answerable=can_answer,
            open_url=_opener(stderr), notice=lambda line: _line(stderr, line),
            url_asker=url_asker)
        for status in toolset.statuses:  # each failed server: one line, with its code
            if status.error is not None:
                _line(stderr, format_line(status.code or MCP_UNAVAILABLE, status.error))
        try:
            _warn_rules(plan, {status.name: [tool.remote_name for tool in status.tools]
                               if status.started else None for status in toolset.statuses},
                        stderr, commands={tool.name for status in toolset.statuses
                                          for tool in status.tools
                                          if "command" in tool.schema.get("properties", {})})
            gate = PermissionGate(plan.rules(), Approvals(approvals_file()),
                                  events=runtime.events, notice=lambda line: _line(stderr, line),
                                  timeout=runtime.settings.question_timeout,
                                  session_id=runtime.session_id)
            stack.callback(toolset.register(runtime.tools))
            stack.callback(runtime.tools.use(permission_policy(gate, runtime.tools.get)))
            yield gate
        finally:
            # shielded: a signal's cancellation must still see every server terminated
            await _close(toolset)


def _warn_rules(plan: ToolPlan, servers: Mapping[str, list[str] | None],
                stderr: TextIO, *, commands: Collection[str] = ()) -> None:
    """A rule that cannot match a tool offered here says so: a typo is silent otherwise.
    ``commands``: the tools whose input has a ``command`` (a rule's specifier is one)."""
    from dsh_cli.permissions.unmatched import agent_warnings

    for line in agent_warnings(plan.rules(), servers, shared=plan.shared, commands=commands):
        _line(stderr, line)


def _opener(stderr: TextIO) -> Callable[[str], object]:
    """How a URL the human agreed to open is opened: the browser where there is a display,
    else the URL printed on stderr."""
    import os

    from dsh_cli.mcp_client.forms.url_mode import open_page
    from dsh_cli.sources.surroundings import browser_available

    launch = browser_available(os.environ)
    return lambda url: open_page(url, launch=launch,
                                 say=lambda line: _line(stderr, notice(line)))


async def _close(toolset: Any) -> None:
    import asyncio

    closing = asyncio.ensure_future(toolset.close())
    try:
        await asyncio.shield(closing)
    except asyncio.CancelledError:
        await closing
        raise


def _line(stream: TextIO, text: str) -> None:
    """One notice line; it may carry a server's words, so nothing in it drives the terminal."""
    from dsh_cli.core.lines import for_terminal
    from dsh_cli.core.sanitize import sanitize_line

    stream.write(for_terminal(sanitize_line(text), stream) + "\n")
    stream.flush()
