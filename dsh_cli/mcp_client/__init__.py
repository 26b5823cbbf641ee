"""MCP servers' tools for dsh's agent (``spec/mcp.md``, section 2).

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
