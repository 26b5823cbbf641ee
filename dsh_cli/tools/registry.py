"""The tool registry: tools by name, and ``execute`` that never raises for a tool failure.

The set grows and shrinks at run time (``register``/``unregister``; names are unique and
fit ``TOOL_NAME``), and each call of the model sees the tools registered at that
moment: MCP servers add their ``mcp__SERVER__TOOL`` tools after a session opens.

Every failure becomes a ``ToolResult`` with ``is_error`` and ``error = {name, code,
message}`` (``code`` absent for errors that are not ``HarnessError``s), so the model, or
a policy wrapping ``execute``, can route on ``code``.

A policy is an async function ``policy(call, ctx, call_next) -> ToolResult`` installed with
``registry.use(policy)``; it may refuse a call (return ``ToolResult.failure(...)``), alter
it, or pass it on with ``await call_next(call, ctx)``. The loop never knows.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import BaseModel, ValidationError

from dsh_cli.core.errors import (
    ABORTED,
    ABORTED_BEFORE_DISPATCH,
    DUPLICATE_TOOL,
    INVALID_ARGS,
    INVALID_TOOL_NAME,
    UNKNOWN_TOOL,
    ToolError,
)
from dsh_cli.core.shapes import format_validation_error
from dsh_cli.core.tasks import close_task
from dsh_cli.interaction import AbortSignal, Agent, HarnessError, UserInteraction

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import PermissionInfo

__all__ = [
    "ABORTED",
    "ABORTED_BEFORE_DISPATCH",
    "DUPLICATE_TOOL",
    "INVALID_ARGS",
    "INVALID_TOOL_NAME",
    "TOOL_NAME",
    "UNKNOWN_TOOL",
    "Policy",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "offerable_name",
]


ArgsT = TypeVar("ArgsT")

# How long a tool that watches the abort signal gets to settle on its own after an abort,
# so it can report its own code (an open question reports ASK_ABORTED, not ABORTED).
ABORT_GRACE_SECONDS = 1.0

# A name every function-calling API takes: OpenAI's and DeepSeek's refuse the whole request
# (so every later call of the run) when one tool's name does not fit.
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def offerable_name(name: str) -> bool:
    """Whether ``name`` fits ``TOOL_NAME``, so the model may be offered a tool called so."""
    return TOOL_NAME.fullmatch(name) is not None


@dataclass
class ToolContext:
    """What a tool may use: the question seam, the owner's abort signal, who is calling."""

    user_interaction: UserInteraction
    signal: AbortSignal = field(default_factory=AbortSignal)
    agent: Agent | None = None
    call_id: str | None = None
    session_id: str | None = None
    rpc_id: str | None = None  # reuse this request id: re-asking a batch pending at resume
    # what that batch's asker stored to carry on with (an MCP call's requestState)
    continuation: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolCall:
    """A call as the model made it: ``arguments`` is the raw JSON text (or a value)."""

    name: str
    arguments: object
    id: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What the model receives: ``content`` is the exact text sent back."""

    content: str
    is_error: bool = False
    error: dict[str, str] | None = None

    @classmethod
    def failure(cls, error: BaseException) -> ToolResult:
        if isinstance(error, HarnessError):
            data = error.to_dict()
        else:
            data = {"name": type(error).__name__, "message": str(error) or type(error).__name__}
        content = json.dumps({"error": data}, ensure_ascii=False, separators=(",", ":"))
        return cls(content=content, is_error=True, error=data)


def loads_arguments(text: str, path: str) -> Any:
    """JSON text the model wrote, or ``INVALID_ARGS`` naming ``path`` and the problem."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ToolError(f"{path}: not valid JSON: {error}", INVALID_ARGS) from None
    except RecursionError:
        raise ToolError(f"{path}: JSON nested too deeply", INVALID_ARGS) from None


class Tool(Generic[ArgsT]):
    """A model-facing tool decoding its arguments to ``ArgsT``; subclasses implement ``run``.

    By default ``ArgsT`` is the pydantic model ``Args``; a tool without one (an MCP tool,
    ``ask_user_question``) overrides ``parameters`` and ``decode``.
    """

    name: str = ""
    description: str = ""
    Args: type[BaseModel]

    def parameters(self) -> dict[str, Any]:
        """The JSON schema the model sees for the arguments."""
        return self.Args.model_json_schema()

    def decode(self, arguments: object) -> ArgsT:
        """Raw arguments to ``Args``, or ``INVALID_ARGS`` with a path the model can act on."""
        if isinstance(arguments, str):
            arguments = loads_arguments(arguments, "arguments") if arguments.strip() else {}
        try:
            # the default decoder serves tools whose ArgsT is their Args model
            return cast("ArgsT", self.Args.model_validate(arguments))
        except ValidationError as error:
            raise ToolError(format_validation_error(error), INVALID_ARGS) from None

    async def run(self, args: ArgsT, ctx: ToolContext) -> str:
        raise NotImplementedError

    def permission_info(self) -> PermissionInfo | None:
        """What the permission gate is told of this tool (an MCP tool: its server, hints and
        definition digest); None: it is asked about by name, with a digest of ``spec()``."""
        return None

    def spec(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters(),
            },
        }


CallNext = Callable[[ToolCall, ToolContext], Awaitable[ToolResult]]
Policy = Callable[[ToolCall, ToolContext, CallNext], Awaitable[ToolResult]]


class ToolRegistry:
    """Tools by name, plus the policies that wrap ``execute``."""

    def __init__(self, tools: list[Tool[Any]] | None = None) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self._policies: list[Policy] = []
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        """Add ``tool``; ``DUPLICATE_TOOL`` when its name is taken (the first one stays),
        ``INVALID_TOOL_NAME`` when it does not fit ``TOOL_NAME``."""
        if not offerable_name(tool.name):
            raise ToolError(f"a tool name must fit {TOOL_NAME.pattern} ({tool.name[:80]!r})",
                            INVALID_TOOL_NAME)
        if tool.name in self._tools:
            raise ToolError(f"a tool named {tool.name!r} is already registered", DUPLICATE_TOOL)
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> Tool[Any] | None:
        """Remove the tool called ``name`` and return it; an unknown name is harmless."""
        return self._tools.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return [tool.spec() for tool in self._tools.values()]

    def use(self, policy: Policy) -> Callable[[], None]:
        """Wrap ``execute`` with ``policy`` (outermost last added); returns a remover."""
        self._policies.append(policy)
        return lambda: self._policies.remove(policy) if policy in self._policies else None

    async def execute(self, name: str, arguments: object, ctx: ToolContext) -> ToolResult:
        """Run a tool call; any failure is returned as a result, never raised."""
        handler: CallNext = self._dispatch
        for policy in self._policies:
            handler = _wrap(policy, handler)
        try:
            return await handler(ToolCall(name, arguments, ctx.call_id), ctx)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return ToolResult.failure(error)

    async def _dispatch(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        if ctx.signal.aborted:
            raise ToolError(f"{call.name} was not run: the turn was cancelled",
                            ABORTED_BEFORE_DISPATCH)
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            raise ToolError(f"unknown tool {call.name!r} (available: {known})", UNKNOWN_TOOL)
        args = tool.decode(call.arguments)
        return ToolResult(await _run_abortable(tool, args, ctx))


def _wrap(policy: Policy, call_next: CallNext) -> CallNext:
    async def wrapped(call: ToolCall, ctx: ToolContext) -> ToolResult:
        return await policy(call, ctx, call_next)

    return wrapped


async def _run_abortable(tool: Tool[ArgsT], args: ArgsT, ctx: ToolContext) -> str:
    """Run the tool; on abort give it a moment to settle itself, then cancel it."""
    task = asyncio.ensure_future(tool.run(args, ctx))
    abort_wait = asyncio.ensure_future(ctx.signal.wait())
    try:
        await asyncio.wait({task, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            await asyncio.wait({task}, timeout=ABORT_GRACE_SECONDS)
        if not task.done():
            raise ToolError(f"{tool.name} was aborted: {ctx.signal.reason}", ABORTED)
        return task.result()
    finally:
        abort_wait.cancel()
        # the tool closes its UI and settles its question before the caller moves on
        await close_task(task)
