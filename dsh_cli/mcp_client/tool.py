"""An MCP server's tool as one of dsh's tools: ``mcp__SERVER__TOOL``.

Its description and input schema are the server's; a call passes the permission policy
first (``permission_info``), then goes to the server. ``isError`` results keep their text
and become ``MCP_TOOL_ERROR``; a dead transport is ``MCP_UNAVAILABLE``; a slow call
``MCP_TIMEOUT``. Cancelling the turn cancels the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import INVALID_ARGS, MCP_TOOL_ERROR, ToolError
from dsh_cli.mcp_client.results import result_text
from dsh_cli.permissions.approvals import definition_digest
from dsh_cli.permissions.vocabulary import Hints, PermissionInfo
from dsh_cli.tools.registry import Tool, ToolContext, loads_arguments

if TYPE_CHECKING:
    from dsh_cli.mcp_client.connection import McpConnection

__all__ = ["McpTool", "tool_name"]

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def tool_name(server: str, tool: str) -> str:
    """The model-facing name: ``mcp__SERVER__TOOL``, as Claude Code names them."""
    return f"mcp__{server}__{tool}"


class McpTool(Tool[Any]):
    """One remote tool; ``definition`` is the SDK's ``Tool`` as the server listed it."""

    def __init__(self, connection: McpConnection, definition: Any) -> None:
        self.connection = connection
        self.remote_name = str(definition.name)
        self.name = tool_name(connection.config.name, self.remote_name)
        self.description = str(definition.description or definition.title or self.remote_name)
        schema = definition.input_schema
        self.schema = schema if isinstance(schema, dict) and schema else dict(_EMPTY_SCHEMA)
        self.hints = Hints.from_annotations(definition.annotations)

    def parameters(self) -> dict[str, Any]:
        return self.schema

    def permission_info(self) -> PermissionInfo:
        server = self.connection.config.name
        return PermissionInfo(server, self.hints,
                              definition_digest(server, self.description, self.schema))

    def decode(self, arguments: Any) -> Any:
        """An object of arguments; the server checks it against its own schema."""
        if isinstance(arguments, str):
            arguments = loads_arguments(arguments, "arguments") if arguments.strip() else {}
        if arguments is None:
            return {}
        if not isinstance(arguments, dict):
            raise ToolError("arguments: expected a JSON object", INVALID_ARGS)
        return arguments

    async def run(self, args: Any, ctx: ToolContext) -> str:
        result = await self.connection.call(self.remote_name, args, ctx)
        text = result_text(result)
        if getattr(result, "is_error", False):
            raise ToolError(text or f"{self.name} failed", MCP_TOOL_ERROR)
        return text
