"""Model-facing tools and the registry that runs them.

    registry.py           tools by name, and ``execute``: a tool's failure a result, never raised
    builtin.py            the tools every session starts with: a built-in tool is one row
    ask_user_question.py  the model-facing ``ask_user_question``: forgiving decoding, the seam
    permission_policy.py  wraps ``execute`` so every tool call passes the permission gate
"""

from dsh_cli.tools.ask_user_question import AskUserQuestionTool
from dsh_cli.tools.builtin import BUILTIN_TOOLS, builtin_tools
from dsh_cli.tools.registry import (
    ABORTED,
    ABORTED_BEFORE_DISPATCH,
    DUPLICATE_TOOL,
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
    "BUILTIN_TOOLS",
    "DUPLICATE_TOOL",
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
    "builtin_tools",
]
