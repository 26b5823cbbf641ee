"""dsh's MCP client as the conformance suite's client under test.

``@modelcontextprotocol/conformance client --command "python dsh_client.py" --scenario S``
starts a server and runs this with its URL as the last argument and the scenario in
``MCP_CONFORMANCE_SCENARIO``. Everything goes through dsh's own client
(``dsh_cli.tools.mcp``): the connection, the tools as the model sees them, and elicitation
answered through a real ``UserInteraction`` whose human skips every question, so a form's
defaults are what is sent (scenario ``elicitation-sep1034-client-defaults``).
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


def skip_everything(context: object) -> dict[str, object]:
    """The human skips every question of the batch: the seam answers with the defaults."""
    request = getattr(context, "request", context)  # the batch (ScriptedProvider passes it)
    return {"answers": [{"id": question.id, "selected": []} for question in request.questions]}


async def main(url: str, scenario: str) -> int:
    ui = UserInteraction()
    ui.register_provider(ScriptedProvider(skip_everything))
    # the suite's servers take one transport connection: no era probe first
    servers = parse_servers({"mcpServers": {"server": {"type": "http", "url": url,
                                                       "protocol": "legacy"}}},
                            "conformance", {})
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
            if scenario.startswith("elicitation"):
                calls[scenario] = [(name, {}) for name in names]
            for name, arguments in calls.get(scenario, []):
                ctx = ToolContext(user_interaction=ui, call_id=f"call_{name}")
                result = await registry.execute(name, arguments, ctx)
                print(f"{name}: {result.content[:300]}", file=sys.stderr)
        finally:
            await toolset.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))))
