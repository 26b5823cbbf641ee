"""dsh's MCP client as the conformance suite's client under test.

``@modelcontextprotocol/conformance client --command "python dsh_client.py" --scenario S``
starts a server and runs this with its URL as the last argument and the scenario in
``MCP_CONFORMANCE_SCENARIO``. Everything goes through dsh's own client
(``dsh_cli.tools.mcp``): the connection, the tools as the model sees them, and elicitation
answered through a real ``UserInteraction`` whose human skips every question, so a form's
defaults are what is sent (scenario ``elicitation-sep1034-client-defaults``). What each
tool call returned goes to stderr, which the suite keeps (``stderr.txt`` of ``-o DIR``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile

from dsh_cli.interaction import ScriptedProvider, UserInteraction
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.mcp import McpToolset, parse_servers
from dsh_cli.tools.registry import ToolContext

# scenarios whose server judges what happens while each of its tools (no arguments) runs
CALL_EVERY_TOOL = ("elicitation-sep1034-client-defaults", "sse-retry")
PROTOCOL = "DSH_CONFORMANCE_PROTOCOL"  # the server entry's "protocol" (the suite passes env on)


def skip_everything(context: object) -> dict[str, object]:
    """The human skips every question of the batch: the seam answers with the defaults."""
    request = getattr(context, "request", context)  # the batch (ScriptedProvider passes it)
    return {"answers": [{"id": question.id, "selected": []} for question in request.questions]}


async def main(url: str, scenario: str) -> int:
    ui = UserInteraction()
    ui.register_provider(ScriptedProvider(skip_everything))
    # the entry a user would write: the era is negotiated (2026-07-28 probe, then the
    # session era these servers speak) unless the test asks for "protocol": "legacy"
    entry = {"type": "http", "url": url, "protocol": os.environ.get(PROTOCOL, "auto")}
    servers = parse_servers({"mcpServers": {"server": entry}}, "conformance", {})
    failed = 0
    with tempfile.TemporaryFile("w+") as errlog:
        toolset = await McpToolset.start(servers, errlog=errlog, elicitation=ui,
                                         report=lambda line: print(line, file=sys.stderr))
        try:
            if not toolset.connections:
                return 1
            registry = ToolRegistry()
            toolset.register(registry)
            names = [tool.name for tool in toolset.tools]
            print("tools:", ", ".join(names), file=sys.stderr)
            calls = {"tools_call": [("mcp__server__add_numbers", {"a": 5, "b": 3})]}
            if scenario in CALL_EVERY_TOOL:
                calls[scenario] = [(name, {}) for name in names]
            for name, arguments in calls.get(scenario, []):
                ctx = ToolContext(user_interaction=ui, call_id=f"call_{name}")
                result = await registry.execute(name, arguments, ctx)
                print(f"{name}: {result.content[:300]}", file=sys.stderr)
                failed += result.is_error
        finally:
            await toolset.close()
    return 1 if failed else 0  # a failed call is the suite's "client exited with error"


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))))
