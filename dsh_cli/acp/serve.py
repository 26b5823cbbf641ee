"""The ``dsh acp`` process: one ACP connection on stdin/stdout until the client hangs up.

The SDK routes and frames the JSON-RPC (``acp.connection.Connection`` on dsh's ``StdioWire``);
dsh answers the methods (``DshAgent``). At EOF every running turn is cancelled first (its
pending questions and permission requests end ``ASK_ABORTED``), then every session is
closed (stored as it stands, its MCP servers stopped), and the process exits 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.session.tools import ToolPlan
    from dsh_cli.sources import Prepared

__all__ = ["serve"]


async def serve(settings: Settings, plan: ToolPlan, options: Mapping[str, Any], *,
                source: Prepared | None = None) -> int:
    """Answer one client until its stdin ends; the exit status."""
    from acp.agent.router import build_agent_router
    from acp.connection import Connection

    from dsh_cli.acp.agent import DshAgent
    from dsh_cli.acp.wire import open_stdio

    wire = await open_stdio()
    connection: Connection | None = None

    async def request(method: str, params: dict[str, Any]) -> Any:
        assert connection is not None
        return await connection.send_request(method, params)

    agent = DshAgent(settings, plan, options, post=wire.post, request=request, drain=wire.drain,
                     source=source)
    # session/close is "unstable" in the SDK's 0.12 tables; dsh offers it (docs/acp.md)
    connection = Connection(build_agent_router(agent, use_unstable_protocol=True), wire,  # type: ignore[arg-type]
                            listening=False)
    wire.on_eof = agent.end_turns
    try:
        await connection.main_loop()
    finally:
        agent.end_turns()
        await agent.close()
        await connection.close()
    return 0
