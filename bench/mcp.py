"""MCP tools: one call through dsh (registry, permission policy, adapter) vs the bare SDK call,
one call over dsh's bounded stdio transport vs the SDK's ``stdio_client``, and ``dsh chat``
start-up with and without an MCP server configured."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from bench.context import Context
from bench.proc import dsh_argv, run
from bench.table import Row, at_most

BUDGET = 1.2
GUARD_BUDGET = 1.05  # the max_mcp_message guard's cost on a normal call (spec/mcp.md, 4)
NOTES = str(Path(__file__).resolve().parents[1] / "tests" / "fakes" / "mcp_notes_server.py")


async def _calls(count: int) -> tuple[list[float], list[float]]:
    """Milliseconds per ``read_notes`` call: through dsh's registry, and the bare client's."""
    import os

    from mcp import Client, StdioServerParameters

    from dsh_cli.interaction import UserInteraction
    from dsh_cli.mcp_client import McpToolset, parse_servers
    from dsh_cli.permissions import PermissionGate, Rules
    from dsh_cli.tools import ToolContext, ToolRegistry
    from dsh_cli.tools.permission_policy import permission_policy

    entry = {"command": sys.executable, "args": [NOTES]}
    servers = parse_servers({"mcpServers": {"notes": entry}}, "bench", {})
    errlog = open(os.devnull, "w")  # noqa: SIM115  # closed below, after the servers
    toolset = await McpToolset.start(servers, errlog=errlog)
    registry = ToolRegistry()
    toolset.register(registry)
    registry.use(permission_policy(PermissionGate(Rules()), registry.get))
    ctx = ToolContext(UserInteraction())
    through, bare = [], []
    params = StdioServerParameters(command=sys.executable, args=[NOTES])
    try:
        async with Client(params) as client:
            for _ in range(count):  # interleaved, so drift hits both sides alike
                started = time.perf_counter()
                result = await registry.execute("mcp__notes__read_notes", "{}", ctx)
                through.append((time.perf_counter() - started) * 1000)
                assert result.error is None, result
                started = time.perf_counter()
                await client.call_tool("read_notes", {})
                bare.append((time.perf_counter() - started) * 1000)
    finally:
        await toolset.close()
        errlog.close()
    return through, bare


async def _transports(count: int) -> tuple[list[float], list[float]]:
    """Milliseconds per ``read_notes`` call: over dsh's bounded transport, and the SDK's."""
    import os

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from dsh_cli.mcp_client.config.servers import DEFAULT_MAX_MESSAGE
    from dsh_cli.mcp_client.transport.stdio import stdio_transport

    params = StdioServerParameters(command=sys.executable, args=[NOTES])
    guarded_times, sdk_times = [], []
    with open(os.devnull, "w") as errlog:
        guarded = stdio_transport(params, name="notes", limit=DEFAULT_MAX_MESSAGE, log=errlog,
                                  notice=print, ended=print)
        async with Client(guarded) as ours, Client(stdio_client(params, errlog=errlog)) as sdk:
            for _ in range(count):  # interleaved, so drift hits both sides alike
                for client, figures in ((ours, guarded_times), (sdk, sdk_times)):
                    started = time.perf_counter()
                    await client.call_tool("read_notes", {})
                    figures.append((time.perf_counter() - started) * 1000)
    return guarded_times, sdk_times


def measure(ctx: Context) -> list[Row]:
    through, bare = asyncio.run(_calls(ctx.runs(200)))
    guarded, sdk = asyncio.run(_transports(ctx.runs(300)))
    config = ctx.work / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": sys.executable,
                                                           "args": [NOTES]}}}))
    without: list[float] = []
    with_mcp: list[float] = []
    for _ in range(ctx.runs(10)):
        for figures, extra in ((without, ()), (with_mcp, ("--mcp-config", str(config)))):
            result = run(dsh_argv("chat", "-m", "demo", "--plain", *extra), ctx.env)
            if result.status != 0:
                raise RuntimeError(f"dsh chat {' '.join(extra)} exited {result.status}")
            figures.append(result.seconds * 1000)
    return [
        Row("MCP tool call through dsh", "ms", through, bare, "bare mcp.Client call",
            f"≤ {BUDGET} × floor", at_most(BUDGET)),
        Row("MCP call over the bounded stdio transport", "ms", guarded, sdk,
            "SDK stdio_client call", f"≤ {GUARD_BUDGET} × floor", at_most(GUARD_BUDGET)),
        Row("dsh chat start-up, MCP server configured", "ms", with_mcp, without,
            "dsh chat, no MCP"),
    ]
