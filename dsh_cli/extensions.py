"""dsh's extension points: what you can add, the protocol it follows, where it is registered.

Read this first. Each point is a protocol and a table by name; adding one is a new module
plus one registration line (``docs/architecture.md`` walks through each):

- **A tool** the model can call: subclass ``Tool`` (a ``name``, a ``description``, an
  ``Args`` pydantic model or your own ``parameters``/``decode``, and ``async run(args,
  ctx)``). Every session starts with ``BUILTIN_TOOLS`` (name -> factory); a live session's
  ``ToolRegistry`` grows and shrinks by name with ``register``/``unregister`` (names are
  unique: ``DUPLICATE_TOOL``), which is how MCP servers add ``mcp__SERVER__TOOL`` tools
  after start-up. Each call of the model sees the set as it is at that moment.
- **A tool policy** around every call (permissions): ``Policy``, installed with
  ``ToolRegistry.use(policy)``; the agent loop never knows.
- **A model backend**: anything that follows ``ChatModel`` (``name`` and ``stream``).
  ``MODEL_BACKENDS`` maps an exact model name, or a ``prefix:``, to a ``ModelBackend``
  whose factory imports the backend only when that model is chosen; the ``""`` row (the
  OpenAI-compatible client) serves every other name.
- **A question provider** (who answers ``ask_user_question``): anything that follows
  ``UserInteractionProvider`` (``async ask(request) -> answer``). The answer-source table
  in ``dsh_cli/sources.py`` turns each front door's options into the one provider that
  answers; a new provider is one module there plus one row.

The names below are re-exported from where they live, so an extension imports them here.
"""

from __future__ import annotations

from dsh_cli.interaction import UserInteractionProvider
from dsh_cli.models.base import ChatModel
from dsh_cli.models.resolve import MODEL_BACKENDS, ModelBackend
from dsh_cli.tools.builtin import BUILTIN_TOOLS
from dsh_cli.tools.registry import Policy, Tool, ToolContext, ToolRegistry

__all__ = [
    "BUILTIN_TOOLS",
    "MODEL_BACKENDS",
    "ChatModel",
    "ModelBackend",
    "Policy",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "UserInteractionProvider",
]
