"""The task layer fails closed: a 2025-11-25 HTTP request that names no session gets no task."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from dsh_cli.mcp_server.tasks.layer import TaskLayer


def _context(method: str, params: dict[str, Any], headers: dict[str, str]) -> Any:
    """A request as the SDK hands it to middleware: over HTTP, with these headers."""
    return SimpleNamespace(method=method, params=params, protocol_version="2025-11-25",
                           request=SimpleNamespace(headers=headers), meta=None)


def _layer() -> TaskLayer:
    async def work(signal: Any) -> dict[str, Any]:
        return {"content": []}

    return TaskLayer(lambda ctx, name, arguments: work)


@pytest.mark.parametrize(("method", "params"), [
    ("tools/call", {"name": "ask_user_question", "arguments": {}, "task": {"ttl": 1000}}),
    ("tasks/get", {"taskId": "t"}), ("tasks/result", {"taskId": "t"}),
    ("tasks/list", {}), ("tasks/cancel", {"taskId": "t"}),
], ids=["call", "get", "result", "list", "cancel"])
def test_a_request_without_a_session_gets_no_task_and_sees_none(method, params):
    layer = _layer()

    async def untouched(ctx: Any) -> Any:
        raise AssertionError("the request went past the task layer")

    with pytest.raises(MCPError) as refused:
        asyncio.run(layer(_context(method, params, {}), untouched))
    assert refused.value.error.code == -32600
    assert "names no MCP session" in refused.value.error.message
    assert not layer.tasks.owned("stdio")  # nothing was made under a shared owner


def test_a_plain_call_without_a_session_is_served_as_ever():
    async def served(ctx: Any) -> Any:
        return {"content": [], "served": True}

    result = asyncio.run(_layer()(_context("tools/call", {"name": "x", "arguments": {}}, {}),
                                  served))
    assert result == {"content": [], "served": True}
