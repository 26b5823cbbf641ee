"""One ``approve_tool_use`` call: Claude Code's ``--permission-prompt-tool`` contract.

The agent asks whether *its* tool may run (``{tool_name, input, tool_use_id?}``); the
request goes through a ``PermissionGate`` of this server process (rules, approvals given
"for this session", approvals saved "always" in the config directory) and, when it must
ask, to the human at the desk. A grant covers what the human saw: this agent's tool with
this input in this working directory (``call_digest``), never the tool for any input.
The result text is what Claude Code parses:
``{"behavior": "allow", "updatedInput": input}`` or ``{"behavior": "deny", "message": …}``.
Anything that ends without a decision (no desk, timeout, dismissal, abort) is a deny whose
message says why, so the agent never hangs and never runs a tool nobody approved.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import INVALID_ARGS, NO_PERMISSION_PROVIDER, HarnessError
from dsh_cli.core.events import AssistantMessage, ToolResultEvent
from dsh_cli.mcp_server.desks import NOT_TAKEN
from dsh_cli.permissions.approvals import call_digest
from dsh_cli.permissions.vocabulary import PermissionRequest

if TYPE_CHECKING:
    from dsh_cli.core.signal import AbortSignal
    from dsh_cli.mcp_server.service import AskService
    from dsh_cli.permissions.gate import PermissionGate

__all__ = ["APPROVE_TOOL", "ApproveService", "approve_tool_spec"]

APPROVE_TOOL = "approve_tool_use"
DESCRIPTION = (
    "Ask the human at their dsh desk whether a tool call may run (Claude Code's "
    "--permission-prompt-tool contract). Returns JSON text: {\"behavior\": \"allow\", "
    "\"updatedInput\": ...} or {\"behavior\": \"deny\", \"message\": ...}.")
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_name": {"type": "string", "description": "The tool that wants to run."},
        "input": {"type": "object", "description": "The arguments it would run with."},
        "tool_use_id": {"type": "string", "description": "The agent's id of the call."},
    },
    "required": ["tool_name", "input"],
}


def approve_tool_spec() -> dict[str, Any]:
    """Name, description and input schema of ``approve_tool_use``."""
    return {"name": APPROVE_TOOL, "description": DESCRIPTION, "parameters": INPUT_SCHEMA}


_SILENT_DESK = NOT_TAKEN.partition("{")[0]  # "no dsh desk took the "


def _allow(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"behavior": "allow", "updatedInput": arguments}


def _deny(message: str) -> dict[str, Any]:
    return {"behavior": "deny", "message": message}


class ApproveService:
    """Runs ``approve_tool_use`` calls through ``gate``; ``asks`` owns the session record."""

    def __init__(self, gate: PermissionGate, asks: AskService) -> None:
        self.gate = gate
        self.asks = asks
        self._calls = itertools.count(1)

    async def approve(self, arguments: Any, *, client: str | None, signal: AbortSignal,
                      source: dict[str, Any] | None = None) -> dict[str, Any]:
        """The contract's result object; every failure is a deny that says why. ``source``:
        who asks, as a hub knows its remote agent (else this process's client and cwd)."""
        self.asks.session.open(client)
        self.gate.session_id = self.asks.session.session_id
        call_id = f"approve_{next(self._calls)}"
        self.asks.session.emit(AssistantMessage("", [{"id": call_id, "name": APPROVE_TOOL,
                                              "arguments": _compact(arguments)}]))
        result = await self._decide(arguments, client=client, signal=signal,
                                    call_id=call_id, source=source)
        self.asks.session.emit(ToolResultEvent(call_id, APPROVE_TOOL, _compact(result), None))
        return result

    async def _decide(self, arguments: Any, *, client: str | None, signal: AbortSignal,
                      call_id: str, source: dict[str, Any] | None) -> dict[str, Any]:
        tool, tool_input, tool_use_id = _parsed(arguments)
        if tool is None:
            return _deny(f"{INVALID_ARGS}: approve_tool_use needs tool_name (a string) and "
                         "input (an object)")
        # The agent's own id labels the request on the desk; ours keys who asks.
        cwd = os.getcwd() if source is None else str(source.get("cwd") or "")
        # a grant covers one grantee: this process's client, or a hub's agent (its token)
        grantee = client if source is None else f"{source.get('token')}/{client}"
        request = PermissionRequest(tool=tool, arguments=tool_input, call_id=tool_use_id
                                    or call_id, agent=client, signal=signal, scope="input",
                                    cwd=cwd)
        self.asks.sources[request.call_id or call_id] = source if source is not None else {
            "client": client, "cwd": cwd, "pid": os.getpid()}
        try:
            await self.gate.check(request, call_digest(grantee, tool, tool_input, cwd))
        except HarnessError as error:
            if error.code == NO_PERMISSION_PROVIDER and error.message.startswith(_SILENT_DESK):
                return _deny(f"denied: {error.message}")  # a desk is there, but silent
            if error.code == NO_PERMISSION_PROVIDER:
                return _deny(f"denied: no one is at the dsh desk to approve {tool}; "
                             "run `dsh attach` in a terminal")
            return _deny(error.message)
        finally:
            self.asks.sources.pop(request.call_id or call_id, None)
        return _allow(tool_input)


def _parsed(arguments: Any) -> tuple[str | None, dict[str, Any], str | None]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return None, {}, None
    if not isinstance(arguments, dict):
        return None, {}, None
    tool, tool_input = arguments.get("tool_name"), arguments.get("input")
    tool_use_id = arguments.get("tool_use_id")
    if not isinstance(tool, str) or not tool.strip() or not isinstance(tool_input, dict):
        return None, {}, None
    return tool, tool_input, tool_use_id if isinstance(tool_use_id, str) else None


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)
