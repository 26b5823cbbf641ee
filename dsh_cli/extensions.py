"""dsh's extension points: what you can add, the protocol it follows, where it is registered.

Read this first. Each point is a protocol and a table by name; adding one is a new module
plus one registration line (``docs/architecture.md`` walks through each). The indented
rows below are the protocols' members as the code declares them: ``tests/test_extensions.py``
fails when a row and the code differ.

- **A tool** the model can call: subclass ``Tool`` (a ``name``, a ``description``, an
  ``Args`` pydantic model or your own ``parameters``/``decode``, ``async run(args,
  ctx)``, and ``permission_info()`` if the permission gate should know more than its
  spec: an MCP tool's server and hints). Every session starts with ``BUILTIN_TOOLS``
  (name -> factory); a live session's ``ToolRegistry`` grows and shrinks by name with
  ``register``/``unregister`` (names are unique: ``DUPLICATE_TOOL``), which is how MCP
  servers add ``mcp__SERVER__TOOL`` tools after start-up. Each call of the model sees the
  set as it is at that moment.
- **A tool policy** around every call (permissions): ``Policy``, installed with
  ``ToolRegistry.use(policy)``; the agent loop never knows.
- **A model backend**: anything that follows ``ChatModel``:

    ``ChatModel.name: str``
    ``ChatModel.on_retry: RetryHook``  told before each wait for a retry
    ``ChatModel.stream(messages, tools) -> AsyncIterator[StreamItem]``

  ``MODEL_BACKENDS`` maps an exact model name, or a ``prefix:``, to a ``ModelBackend``
  whose factory imports the backend only when that model is chosen; the ``""`` row (the
  OpenAI-compatible client) serves every other name.
- **A question provider** (who answers ``ask_user_question``): anything that follows
  ``UserInteractionProvider``:

    ``async UserInteractionProvider.ask(context) -> object``

  ``context`` is the ``AskContext`` of one showing (the batch is ``context.request``); it
  returns an ``AskUserQuestionAnswer`` or its JSON, or raises a ``UserInteractionError``.
  Anything more it offers is a trait, one protocol each (``PROVIDER_TRAITS``): the provider
  names the protocol among its bases and sets the member; the seam reads a trait only with
  ``isinstance``, never ``getattr``. Without a trait, batches take turns and an answer is
  recorded under the class name.

    ``Concurrent.concurrent: bool``  ``True``: holds many batches at once, no turn queue
    ``TakesTurns.takes_turns: bool``  ``True``: draws, so async batches wait for a turn's end
    ``Immediate.immediate: bool``  ``True``: answers at once, without a human
    ``AnsweredBy.answered_by: str``  who answered, when ``ask`` returns the answer
    ``AnsweredThroughTable.answered_through_table: str``  who, when settled through the table
    ``Seen.seen(rpc_id) -> bool``  whether a human's desk has taken the batch

  The answer-source table in ``dsh_cli/sources/table.py`` turns each front door's options
  into the one provider that answers; a new provider is one module there plus one row.
- **A permission provider** (who decides a tool call the rules leave open): anything that
  follows ``PermissionProvider``:

    ``async PermissionProvider.decide(request, rpc_id) -> PermissionDecision``

  It has no traits. The row's opener yields it beside its question provider
  (``Source(name, provider, permissions)``), and ``answer_source`` registers both.

The names below are re-exported from where they live, so an extension imports them here.
"""

from __future__ import annotations

from dsh_cli.interaction import UserInteractionProvider
from dsh_cli.interaction.traits import (
    PROVIDER_TRAITS,
    AnsweredBy,
    AnsweredThroughTable,
    Concurrent,
    Immediate,
    Seen,
    TakesTurns,
)
from dsh_cli.models.base import ChatModel
from dsh_cli.models.resolve import MODEL_BACKENDS, ModelBackend
from dsh_cli.permissions.gate import PermissionProvider
from dsh_cli.tools.builtin import BUILTIN_TOOLS
from dsh_cli.tools.registry import Policy, Tool, ToolContext, ToolRegistry

__all__ = [
    "BUILTIN_TOOLS",
    "CONTRACTS",
    "MODEL_BACKENDS",
    "PROVIDER_TRAITS",
    "AnsweredBy",
    "AnsweredThroughTable",
    "ChatModel",
    "Concurrent",
    "Immediate",
    "ModelBackend",
    "PermissionProvider",
    "Policy",
    "Seen",
    "TakesTurns",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "UserInteractionProvider",
]

# every protocol the page above lists, member by member
CONTRACTS: tuple[type, ...] = (ChatModel, UserInteractionProvider, *PROVIDER_TRAITS,
                               PermissionProvider)
