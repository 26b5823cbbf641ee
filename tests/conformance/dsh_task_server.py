"""dsh's MCP task layer behind the conformance suite's task fixtures, over dsh's HTTP door.

The suite's server ``tasks-*`` scenarios call fixture tools by name (``greet``,
``slow_compute``, ``failing_job``, ``protocol_error_job``) that ``dsh mcp`` has no reason
to have, so against ``dsh mcp --http`` only their fixture-free checks apply. This program
puts the same ``dsh_cli.mcp_server.tasks`` layer (store, 2025-11-25 wire, 2026-07-28
extension) and the same ``serve_http`` (token, Host check, session cap) in front of those
fixtures, so every other check judges dsh's task code too. It prints its URL on stderr.
The fixtures that park for elicitation (``confirm_delete``, ``multi_input``,
``test_tool_with_task``) are left out: dsh's tools never ask the client for input.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from dsh_cli.core.signal import AbortSignal


def text_result(text: str, *, error: bool = False) -> Any:
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


async def slow(seconds: float, signal: AbortSignal) -> None:
    """Sleep ``seconds``, or less when the task is cancelled."""
    waiting = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({waiting}, timeout=seconds)
    finally:
        waiting.cancel()


async def run_fixture(name: str, arguments: dict[str, Any], signal: AbortSignal) -> Any:
    if name == "greet":
        return text_result(f"Hello, {arguments.get('name', 'World')}!")
    if name == "slow_compute":
        seconds = arguments.get("seconds", 1)
        await slow(float(seconds) if isinstance(seconds, int | float) else 1.0, signal)
        return text_result(f"computed {arguments.get('label', '')} after {seconds}s")
    if name == "failing_job":
        await slow(1.0, signal)
        return text_result("the job failed", error=True)
    if name == "protocol_error_job":
        raise RuntimeError("the job crashed")
    return text_result(f"unknown tool {name!r}", error=True)  # as dsh mcp answers one


def build() -> Any:
    from mcp.server import Server
    from mcp.types import ListToolsResult, Tool, ToolExecution

    from dsh_cli.mcp_server.tasks import install_tasks

    schema = {"type": "object", "properties": {
        "name": {"type": "string"}, "seconds": {"type": "number"}, "label": {"type": "string"}}}
    tasked = ("slow_compute", "failing_job", "protocol_error_job")
    tools = [Tool(name="greet", input_schema=schema)] + [
        Tool(name=name, input_schema=schema, execution=ToolExecution(
            task_support="required" if name == "failing_job" else "optional"))
        for name in tasked]

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        return await run_fixture(params.name, params.arguments or {}, AbortSignal())

    server = Server("dsh-task-fixtures", on_list_tools=list_tools, on_call_tool=call_tool)

    def work_for(ctx: Any, name: str, arguments: Any, *, asked: bool) -> Any:
        if name not in tasked:
            return None

        async def work(signal: AbortSignal) -> dict[str, Any]:
            result = await run_fixture(name, arguments, signal)
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return work

    install_tasks(server, work_for, required=frozenset({"failing_job"}))
    return server


def main() -> None:
    from dsh_cli.mcp_server.server import serve_http

    def announce(url: str) -> None:
        print(f"dsh: mcp {url}", file=sys.stderr, flush=True)

    asyncio.run(serve_http(build(), announce=announce))


if __name__ == "__main__":
    main()
