"""dsh's MCP client against the reference server ``@modelcontextprotocol/server-everything``."""

from __future__ import annotations

import tempfile

from fakes.npm_programs import npm_program

from dsh_cli.core.signal import AbortSignal
from dsh_cli.interaction import UserInteraction
from dsh_cli.mcp_client import McpToolset, parse_servers
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.registry import ToolContext


def test_server_everything_echo_through_the_toolset(run):
    program = npm_program("mcp-server-everything")

    async def go():
        configs = parse_servers({"mcpServers": {"everything": {
            "command": program, "args": ["stdio"], "startup_timeout": 60}}}, "test.json", {})
        reports: list[str] = []
        with tempfile.TemporaryFile("w+") as errlog:
            toolset = await McpToolset.start(configs, errlog=errlog, report=reports.append)
            try:
                registry = ToolRegistry()
                toolset.register(registry)
                ctx = ToolContext(user_interaction=UserInteraction(), call_id="c1",
                                  signal=AbortSignal())
                result = await registry.execute("mcp__everything__echo",
                                                {"message": "hello from dsh"}, ctx)
                return reports, [tool.name for tool in toolset.tools], result
            finally:
                await toolset.close()

    reports, names, result = run(go())
    assert reports == []
    assert "mcp__everything__echo" in names
    assert result.is_error is False
    assert "hello from dsh" in result.content
