"""Model-facing tools and the registry that runs them."""

from dsh_cli.tools.ask_user_question import AskUserQuestionTool
from dsh_cli.tools.registry import (
    ABORTED,
    ABORTED_BEFORE_DISPATCH,
    INVALID_ARGS,
    UNKNOWN_TOOL,
    Policy,
    Tool,
    ToolCall,
    ToolContext,
    ToolError,
    ToolRegistry,
    ToolResult,
)

__all__ = [
    "ABORTED",
    "ABORTED_BEFORE_DISPATCH",
    "INVALID_ARGS",
    "UNKNOWN_TOOL",
    "AskUserQuestionTool",
    "Policy",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
]
