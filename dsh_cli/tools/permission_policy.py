"""The permission policy: wraps ``ToolRegistry.execute`` so every tool call passes the gate.

The agent loop never learns of it. A tool says what it is through ``Tool.permission_info()``
(MCP tools give their server, annotations and a digest of their definition); a tool whose
``permission_info()`` is None is asked about by name with a digest of its spec.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import HarnessError
from dsh_cli.permissions.approvals import definition_digest
from dsh_cli.permissions.rules import NEVER_ASKED
from dsh_cli.permissions.vocabulary import Hints, PermissionInfo, PermissionRequest
from dsh_cli.tools.registry import ToolResult

if TYPE_CHECKING:
    from dsh_cli.permissions.gate import PermissionGate
    from dsh_cli.tools.registry import CallNext, Policy, Tool, ToolCall, ToolContext

__all__ = ["permission_policy"]


def info_for(tool: Tool[Any] | None, name: str) -> PermissionInfo:
    """The tool's own ``permission_info()``, else one derived from its model-facing spec."""
    info = tool.permission_info() if tool is not None else None
    if isinstance(info, PermissionInfo):
        return info
    spec = tool.spec()["function"] if tool is not None else {}
    return PermissionInfo(None, Hints(), definition_digest(None, spec.get("description"),
                                                           spec.get("parameters")))


def decoded(arguments: Any) -> Any:
    """Arguments as the human should see them: the decoded JSON, else the raw text."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return arguments
    return arguments


def permission_policy(gate: PermissionGate, lookup: Callable[[str], Tool[Any] | None]) -> Policy:
    """A registry policy (``registry.use(...)``) that asks ``gate`` before each call runs."""

    async def policy(call: ToolCall, ctx: ToolContext, call_next: CallNext) -> ToolResult:
        if call.name in NEVER_ASKED:
            return await call_next(call, ctx)
        tool = lookup(call.name)
        if tool is None:  # unknown: let the registry say so
            return await call_next(call, ctx)
        info = info_for(tool, call.name)
        # the request's own signal: a decision seals it (first wins), and the call's stays
        # free to abort the tool that runs next; it is unhooked once decided, so the call's
        # signal (which may live a whole turn) keeps no listener per call
        with ctx.signal.scoped_child() as signal:
            request = PermissionRequest(
                tool=call.name, arguments=decoded(call.arguments), server=info.server,
                hints=info.hints, call_id=call.id, signal=signal, description=tool.description)
            try:
                await gate.check(request, info.digest)
            except HarnessError as error:
                return ToolResult.failure(error)
        return await call_next(call, ctx)

    return policy
