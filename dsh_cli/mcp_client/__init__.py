"""MCP servers' tools for dsh's agent (``spec/mcp.md``, section 2).

    toolset.py      McpToolset: the started servers of one session and their tools
    connection.py   one connection to a server, kept open by a task of its own
    tool.py         a server's tool as one of dsh's: ``mcp__SERVER__TOOL``
    results.py      a tool result as the text the model receives
    result_type.py  a result without ``resultType`` read as ``"complete"`` (2026-07-28)
    login.py        ``dsh mcp login``'s flow: authorization code + PKCE, a one-shot callback
    sdk_private.py  the SDK's private names dsh overrides or reads, in one checked list
    config/         the configuration: server entries, config files, the project file, trust
    transport/      the transports: stdio, bounded lines, streamed messages, server logs
    forms/          the forms: elicitation, URL consents, continuation
    auth/           the logins: OAuth providers, endpoint checks, grants, DPoP, tokens

``McpToolset.start`` connects to every configured server in parallel; a server that fails or
exceeds its ``startup_timeout`` is reported in one line and left out, and the rest go on.
Its tools join the session's ``ToolRegistry`` as ``mcp__SERVER__TOOL`` (a name that does not
fit, or is taken, is left out with one line: ``toolset.py``). Nothing here
imports the MCP SDK until a server is actually started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_cli.mcp_client.config.configured import configured_servers
    from dsh_cli.mcp_client.config.servers import ServerConfig, load_servers, parse_servers
    from dsh_cli.mcp_client.tool import tool_name
    from dsh_cli.mcp_client.toolset import McpToolset, ServerStatus

__all__ = ["McpToolset", "ServerConfig", "ServerStatus", "configured_servers", "load_servers",
           "parse_servers", "tool_name"]

# Names load on first use: a session that only looks for configuration (configured_servers)
# imports neither the tool adapter nor the permission vocabulary.
_HOMES = {"ServerConfig": "config.servers", "configured_servers": "config.configured",
          "load_servers": "config.servers", "parse_servers": "config.servers",
          "tool_name": "tool", "McpToolset": "toolset", "ServerStatus": "toolset"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{home}"), name)
