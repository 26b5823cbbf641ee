"""``get_user_answer``: the outcome of an async ``ask_user_question`` batch, by its ticket.

For agents that cannot follow MCP tasks: an async call returns ``{"accepted": true,
"ticket": …}`` at once, and this tool returns, for that ticket, the answer batch (exactly
what a waiting call returns), ``{"status": "pending", …}`` while the human has not
answered, or the error object (``ASK_CANCELLED``, ``ASK_TIMEOUT``, …) with ``isError``. It
waits up to ``wait_seconds`` (``TICKET_WAIT_SECONDS`` at most: a bigger value is clamped,
and the pending result says how long it waited) and returns as soon as the batch settles.
A cancel of this call ends the wait, never the question.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from dsh_cli.core.errors import (
    ASK_ABORTED,
    INVALID_ARGS,
    HarnessError,
    ToolError,
    UserInteractionError,
)
from dsh_cli.core.limits import TICKET_CHARACTERS, TICKET_WAIT_SECONDS
from dsh_cli.mcp_server.service import TICKET_KIND
from dsh_cli.mcp_server.tickets import Tickets, unowned
from dsh_cli.tools.registry import ToolResult, loads_arguments

__all__ = ["NAME", "get_user_answer", "output_schema", "tool_spec"]

NAME = "get_user_answer"
# a pending batch no desk has taken yet: asked while nobody had ``dsh attach`` open
NOT_SEEN = "no desk has seen it yet: it waits for the human to run `dsh attach`"
_CAP = f"{TICKET_WAIT_SECONDS:g}"

DESCRIPTION = (
    "The outcome of an ask_user_question call made with delivery 'async', by the ticket it "
    "returned. Returns the answers exactly as a waiting call would; {\"status\": \"pending\"} "
    "while the human has not answered yet; or the error (isError, e.g. ASK_CANCELLED when "
    "they dismissed it, ASK_TIMEOUT). wait_seconds (default 0: look and return at once) "
    f"waits for the answer and returns as soon as it comes; at most {_CAP} seconds, a bigger "
    "value waits that long. While it is pending, carry on with other work and ask again "
    "later; a ticket belongs to this session only."
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ticket": {"type": "string", "maxLength": TICKET_CHARACTERS,
                   "description": "The ticket an async ask_user_question returned."},
        "wait_seconds": {"type": "number", "minimum": 0, "default": 0,
                         "description": f"How long to wait for the answer (at most {_CAP})."},
    },
    "required": ["ticket"],
}


def tool_spec() -> dict[str, Any]:
    """Name, description and input schema, the shape ``ToolRegistry`` specs have."""
    return {"name": NAME, "description": DESCRIPTION, "parameters": INPUT_SCHEMA}


def output_schema(answer_schema: dict[str, Any]) -> dict[str, Any]:
    """The answer (``ask_user_question``'s ``outputSchema``, which admits the error), or
    the pending object."""
    pending = {"type": "object", "title": "PendingAnswer",
               "required": ["status", "ticket"],
               "properties": {"status": {"const": "pending"}, "ticket": {"type": "string"},
                              "waited_seconds": {"type": "number"},
                              "note": {"type": "string"}}}
    definitions = {**answer_schema.get("$defs", {}), "PendingAnswer": pending}
    return {"type": "object", "$defs": definitions,
            "anyOf": [*answer_schema["anyOf"], {"$ref": "#/$defs/PendingAnswer"}]}


async def get_user_answer(tickets: Tickets, arguments: Any, owner: str | None,
                          seen: Callable[[str], bool] | None = None) -> ToolResult:
    """The result for ``owner``'s ticket: its outcome, pending (with ``note`` when ``seen``
    says no desk has it yet), or the error as a result (``NO_TICKET_OWNER`` when the
    request's session is not known)."""
    try:
        ticket_id, seconds = _decode(arguments)
        if owner is None:
            raise unowned()
        ticket = await tickets.wait(ticket_id, owner, seconds, kind=TICKET_KIND)
    except HarnessError as error:
        return ToolResult.failure(error)
    if not ticket.done:
        pending: dict[str, Any] = {"status": "pending", "ticket": ticket.id,
                                   "waited_seconds": seconds}
        if seen is not None and not seen(ticket.id):
            pending["note"] = NOT_SEEN
        return ToolResult(json.dumps(pending, separators=(",", ":")))
    if ticket.outcome.cancelled():  # only while the server stops: no outcome to give
        return ToolResult.failure(UserInteractionError("the question was aborted", ASK_ABORTED))
    outcome: ToolResult = ticket.outcome.result()  # the batch's own result, never raised
    return outcome


def _decode(arguments: Any) -> tuple[str, float]:
    """``(ticket, seconds to wait)``, clamped to the cap; ``INVALID_ARGS`` naming the field."""
    if isinstance(arguments, str):
        arguments = loads_arguments(arguments, "arguments") if arguments.strip() else {}
    if not isinstance(arguments, dict):
        raise ToolError("arguments: expected an object with a 'ticket'", INVALID_ARGS)
    ticket = arguments.get("ticket")
    if not isinstance(ticket, str) or not ticket.strip():
        raise ToolError("ticket: expected the ticket string an async ask_user_question "
                        "returned", INVALID_ARGS)
    if len(ticket) > TICKET_CHARACTERS:
        raise ToolError(f"ticket: longer than {TICKET_CHARACTERS} characters: no ticket is",
                        INVALID_ARGS)
    seconds = arguments.get("wait_seconds", 0)
    if seconds is None:
        seconds = 0
    if isinstance(seconds, str):  # a model's "30"
        try:
            seconds = float(seconds.strip())
        except ValueError:
            raise ToolError("wait_seconds: expected a number of seconds", INVALID_ARGS) from None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or math.isnan(seconds):
        raise ToolError("wait_seconds: expected a number of seconds", INVALID_ARGS)
    if seconds < 0:
        raise ToolError("wait_seconds: expected 0 or more", INVALID_ARGS)
    return ticket.strip(), float(min(seconds, TICKET_WAIT_SECONDS))
