"""``McpToolset``: the started servers of one session and the tools they offer.

A server's tool is offered only when its name is not empty, its ``mcp__SERVER__TOOL``
fits the registry's ``TOOL_NAME`` and no tool before it (in the server's listing, or of a
server configured earlier) took that name; what is left out is said in one line per
server and kind, and the run goes on (``spec/mcp.md`` section 4).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dsh_cli.core.errors import (
    DUPLICATE_TOOL,
    INVALID_TOOL_NAME,
    MCP_UNAVAILABLE,
    HarnessError,
    format_line,
)
from dsh_cli.mcp_client.tool import McpTool
from dsh_cli.tools.registry import TOOL_NAME, offerable_name

if TYPE_CHECKING:
    from dsh_cli.interaction.service import UserInteraction
    from dsh_cli.mcp_client.config.servers import ServerConfig
    from dsh_cli.mcp_client.connection import McpConnection
    from dsh_cli.mcp_client.forms.asking import UrlAsker
    from dsh_cli.mcp_client.transport.server_log import LogSink
    from dsh_cli.tools.registry import ToolRegistry

__all__ = ["McpToolset", "ServerStatus"]


@dataclass
class ServerStatus:
    """What ``dsh mcp list`` shows of one server."""

    name: str
    transport: str
    source: str
    started: bool
    error: str | None = None
    tools: list[McpTool] = field(default_factory=list)
    code: str | None = None  # the error's code: MCP_AUTH_REQUIRED, MCP_UNAVAILABLE


class McpToolset:
    """The started servers of one session and the tools they offer."""

    def __init__(self, connections: list[McpConnection], statuses: list[ServerStatus]) -> None:
        self.connections = connections
        self.statuses = statuses

    @property
    def tools(self) -> list[McpTool]:
        return [tool for status in self.statuses for tool in status.tools]

    @classmethod
    async def start(cls, servers: list[ServerConfig], *, errlog: LogSink,
                    report: Callable[[str], None] | None = None,
                    elicitation: UserInteraction | None = None,
                    client_version: str = "0",
                    open_url: Callable[[str], object] | None = None,
                    answerable: bool = False,
                    notice: Callable[[str], None] | None = None,
                    auth_dir: Path | None = None,
                    url_asker: UrlAsker | None = None
                    ) -> McpToolset:
        """Start every server at once; failures are reported and left out.

        ``elicitation`` is the session's seam: when a provider is registered on it, the
        servers may ask the human (``spec/mcp.md`` section 3); each tool call's own seam
        answers the questions it causes. ``open_url`` opens a page the human agreed to
        open (the CLI passes ``url_mode.open_page`` with ``launch`` set where there is a
        display); by default the URL is printed on stderr. ``answerable``: a provider is
        registered on ``elicitation`` right after the servers start (the session's answer
        source), so the capability is declared now. ``notice`` takes a line for the user
        while the servers run (a refused resume state); by default it goes to ``errlog``.
        ``auth_dir`` holds the logins of remote servers (``tokens.TOKENS_FILE``); None
        presents none. ``url_asker`` takes URL requests in place of dsh's consent question
        (``forms.asking.Elicitor``).
        """
        from dsh_cli.mcp_client.connection import McpConnection

        connections = [McpConnection(server, errlog=errlog, elicitation=elicitation,
                                     client_version=client_version, open_url=open_url,
                                     answerable=answerable, notice=notice,
                                     auth_dir=auth_dir, url_asker=url_asker)
                       for server in servers]
        outcomes = await asyncio.gather(*(connection.start() for connection in connections),
                                        return_exceptions=True)
        statuses: list[ServerStatus] = []
        live: list[McpConnection] = []
        taken: set[str] = set()
        say = notice or (lambda line: _write(errlog, line))
        for connection, outcome in zip(connections, outcomes, strict=True):
            config = connection.config
            if isinstance(outcome, BaseException):
                message, code = ((outcome.message, outcome.code)
                                 if isinstance(outcome, HarnessError)
                                 else (str(outcome), MCP_UNAVAILABLE))
                if report is not None:
                    report(message)
                statuses.append(ServerStatus(config.name, config.transport, config.source,
                                             False, message, code=code))
                continue
            live.append(connection)
            tools = _offered(connection, taken, say)
            statuses.append(ServerStatus(config.name, config.transport, config.source, True,
                                         tools=tools))
        return cls(live, statuses)

    def register(self, registry: ToolRegistry) -> Callable[[], None]:
        """Add the tools to ``registry``; returns a function that takes them out again."""
        names = []
        for tool in self.tools:
            registry.register(tool)
            names.append(tool.name)

        def unregister() -> None:
            for name in names:
                registry.unregister(name)

        return unregister

    async def close(self) -> None:
        """Close every connection (stdio servers are terminated)."""
        await asyncio.gather(*(connection.close() for connection in self.connections),
                             return_exceptions=True)


def _offered(connection: McpConnection, taken: set[str],
             say: Callable[[str], None]) -> list[McpTool]:
    """The server's tools the model may be offered; ``taken`` gains their names."""
    config = connection.config
    tools: list[McpTool] = []
    invalid: list[str] = []
    repeated: list[str] = []
    for definition in connection.tools:
        if not config.offers(str(definition.name)):
            continue
        tool = McpTool(connection, definition)
        if not tool.remote_name or not offerable_name(tool.name):
            invalid.append(tool.remote_name)
        elif tool.name in taken:
            repeated.append(tool.name)
        else:
            taken.add(tool.name)
            tools.append(tool)
    if invalid:
        say(format_line(INVALID_TOOL_NAME, (
            f"MCP server {config.name}: left out {_count(invalid)} whose name is empty or "
            f"as mcp__{config.name}__TOOL does not fit {TOOL_NAME.pattern} "
            f"(the first: {_quoted(invalid[0])})")))
    if repeated:
        say(format_line(DUPLICATE_TOOL, (
            f"MCP server {config.name}: left out {_count(repeated)} whose name is offered "
            f"already (the first: {_quoted(repeated[0])})")))
    return tools


def _count(names: list[str]) -> str:
    return "1 tool" if len(names) == 1 else f"{len(names)} tools"


def _quoted(name: str) -> str:
    """A server's name for a line: JSON-quoted (so blanks and controls show), and short."""
    import json

    shown = json.dumps(name[:60])
    return shown if len(name) <= 60 else f"{shown}… ({len(name)} characters)"


def _write(errlog: LogSink, line: str) -> None:
    from dsh_cli.core.sanitize import sanitize_line

    errlog.write(sanitize_line(line) + "\n")
    errlog.flush()
