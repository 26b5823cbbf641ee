"""The model-facing tool ``ask_user_question``: forgiving decoding, then the seam."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from dsh_cli.core.limits import TICKET_WAIT_SECONDS
from dsh_cli.core.shapes import format_validation_error
from dsh_cli.interaction import ELICITATION_FIELDS, AskUserQuestionItem, AskUserQuestionRequest
from dsh_cli.interaction.validation import LIMITS
from dsh_cli.tools.registry import INVALID_ARGS, Tool, ToolContext, ToolError, loads_arguments

__all__ = ["DELIVERIES", "DESCRIPTION", "MCP_DESCRIPTION", "PARAMETERS", "AskUserQuestionTool",
           "Submit", "decode_questions"]

DELIVERIES = ("wait", "async")

DESCRIPTION = (
    "Ask the human a batch of structured questions and wait for the answers. Use it only "
    "when you cannot proceed safely on inference alone: to choose between paths, confirm a "
    "risky default, or get missing information. Keep questions concise; 1-4 questions per "
    "call. Prefer 2-4 options per question; put the recommended option first and end its "
    "label with ' (Recommended)'. Never add an 'Other' option: the human can always type "
    "their own answer. Keep headers to 12 characters or fewer. Use short, stable ids "
    "(e.g. 'db', 'name'). An option may carry a 'preview' (code, a config, an ASCII "
    "mock-up, a diff; up to {preview} characters and {preview_lines} lines, newlines kept) "
    "that the human compares options by. The result lists, per id, the selected labels, or "
    "'custom' text the human typed instead; an empty 'selected' with no 'custom' means they "
    "skipped it. A 'note' on an answer is extra text the human added ('PostgreSQL, but "
    "version 16'): honour it with the choice; it is present only when given."
).format(preview=f"{LIMITS['preview']:,}", preview_lines=LIMITS["preview_lines"])

# what dsh's own agent does with delivery "async"; dsh mcp's tickets are fetched by a tool
_ASYNC = (
    " Set delivery to 'async' for a question whose answer you do not need for your next "
    "step (a preference to apply later, a detail to confirm before the end): the call "
    "returns at once {\"accepted\": true, \"ticket\": \"...\"}, you carry on working, and "
    "the answer arrives later as a user message naming the ticket, with the same answers "
    "(or the error, e.g. ASK_CANCELLED or ASK_TIMEOUT). Keep the default 'wait' when your "
    "next step depends on the answer."
)
_MCP_ASYNC = (
    " Set delivery to 'async' for a question whose answer you do not need for your next "
    "step (a preference to apply later, a detail to confirm before the end): the call "
    "returns at once {{\"accepted\": true, \"ticket\": \"...\"}} and you carry on working "
    "while the human answers at their dsh desk. Fetch the outcome with the get_user_answer "
    "tool (the ticket, and wait_seconds: how long to wait for it, at most {cap}): it returns "
    "the same answers, {{\"status\": \"pending\"}} while the human has not answered yet, or "
    "the error (e.g. ASK_CANCELLED or ASK_TIMEOUT). Keep the default 'wait' when your next "
    "step depends on the answer."
).format(cap=f"{TICKET_WAIT_SECONDS:g}")
MCP_DESCRIPTION = DESCRIPTION + _MCP_ASYNC
DESCRIPTION = DESCRIPTION + _ASYNC

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "description": "The questions to ask, in order.",
            "minItems": 1,
            "maxItems": LIMITS["questions"],
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "Short stable id, echoed back."},
                    "question": {"type": "string", "description": "The question itself.",
                                 "maxLength": LIMITS["question"]},
                    # 12 is the style the description asks for; the cap the seam enforces
                    # is LIMITS' (the schema states the cap, so it never refuses less)
                    "header": {"type": "string", "maxLength": LIMITS["header"],
                               "description": "Short heading; keep it to 12 characters."},
                    "options": {
                        "type": "array",
                        "description": "Choices; omit for a free-text question.",
                        "maxItems": LIMITS["options"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "label": {"type": "string", "maxLength": LIMITS["label"],
                                          "description": "Shown and returned."},
                                "description": {"type": "string",
                                                "maxLength": LIMITS["description"],
                                                "description": "One line of help."},
                                "preview": {
                                    "type": "string", "maxLength": LIMITS["preview"],
                                    "description": (
                                        "Optional content the human compares options by "
                                        "(code, a config, an ASCII mock-up, a diff), shown "
                                        "beside the options; newlines and indentation kept, "
                                        f"at most {LIMITS['preview_lines']} lines."),
                                },
                            },
                            "required": ["label"],
                        },
                    },
                    "multi_select": {"type": "boolean",
                                     "description": "Allow several options (default false)."},
                },
                "required": ["id", "question"],
            },
        },
        "delivery": {
            "type": "string", "enum": list(DELIVERIES), "default": "wait",
            "description": ("'wait' (default): the call returns the answers. 'async': only "
                            "for questions whose answer the next step does not need; see "
                            "the tool description."),
        },
    },
    "required": ["questions"],
}


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def _slug(header: object) -> str:
    """A header as an id: lower-case letters and digits joined by '-', or '' if none."""
    if not isinstance(header, str):
        return ""
    return _NOT_SLUG.sub("-", header.lower()).strip("-")


def _derive_ids(questions: list[object]) -> list[object]:
    """Claude Code's ``AskUserQuestion`` has no ids: derive them from headers, unique.

    Given ids are kept and reserved first, so a derived one never collides with them."""
    taken = {q["id"] for q in questions if isinstance(q, dict) and isinstance(q.get("id"), str)}
    result: list[object] = []
    for index, question in enumerate(questions, 1):
        if isinstance(question, dict) and "id" not in question:
            base = _slug(question.get("header")) or f"q{index}"
            candidate, suffix = base, 2
            while candidate in taken:
                candidate, suffix = f"{base}-{suffix}", suffix + 1
            taken.add(candidate)
            question = {"id": candidate, **question}
        result.append(question)
    return result


def _forgive_item(item: object) -> object:
    """Undo common model slips in one question: plain-string options, ``multiSelect``.

    The elicitation fields are dropped like any unknown key: a model cannot set them.
    """
    if not isinstance(item, dict):
        return item
    item = {key: value for key, value in item.items() if key not in ELICITATION_FIELDS}
    if "multi_select" not in item and "multiSelect" in item:
        item["multi_select"] = item["multiSelect"]
    options = item.get("options")
    if isinstance(options, list):
        item["options"] = [{"label": o} if isinstance(o, str) else o for o in options]
    return item


@dataclass(frozen=True)
class AskCall:
    """A decoded call: the questions, and whether the call waits for their answers."""

    questions: list[AskUserQuestionItem]
    delivery: str = "wait"


def decode_call(arguments: object) -> AskCall:
    """Raw tool arguments to an ``AskCall``, or ``INVALID_ARGS`` naming the path."""
    arguments = _arguments_object(arguments)
    delivery = arguments.get("delivery", "wait")
    if delivery is None:
        delivery = "wait"
    if delivery not in DELIVERIES:
        import json  # only for the message: dsh ask's start-up imports no json

        raise ToolError(f"delivery: expected 'wait' or 'async', got {json.dumps(delivery)[:40]}",
                        INVALID_ARGS)
    return AskCall(decode_questions(arguments), delivery)


def _arguments_object(arguments: object) -> dict[str, Any]:
    if isinstance(arguments, str):
        arguments = loads_arguments(arguments, "arguments") if arguments.strip() else {}
    if not isinstance(arguments, dict):
        raise ToolError("arguments: expected an object with a 'questions' list", INVALID_ARGS)
    return arguments


def decode_questions(arguments: object) -> list[AskUserQuestionItem]:
    """Raw tool arguments to question items, or ``INVALID_ARGS`` naming the path."""
    arguments = _arguments_object(arguments)
    if "questions" not in arguments:
        raise ToolError("questions: field required", INVALID_ARGS)
    questions = arguments["questions"]
    if isinstance(questions, str):
        questions = loads_arguments(questions, "questions")
    if not isinstance(questions, list):
        raise ToolError("questions: expected a list of questions", INVALID_ARGS)
    items = []
    for index, raw in enumerate(_derive_ids(questions)):
        try:
            items.append(AskUserQuestionItem.model_validate(_forgive_item(raw)))
        except ValidationError as error:
            message = format_validation_error(error, f"questions[{index}]")
            raise ToolError(message, INVALID_ARGS) from None
    return items


# delivery "async" handed to someone else than the session's ``later`` table (``dsh mcp``'s
# tickets): checks and starts the batch, returns its ticket, or raises the seam's errors
Submit = Callable[[AskUserQuestionRequest, ToolContext], str]


class AskUserQuestionTool(Tool[AskCall]):
    """Forwards ``{questions, agent, signal}`` to ``ctx.user_interaction.ask()``, or, for
    ``delivery: "async"``, to ``ctx.user_interaction.later.submit()`` (a ticket at once).

    ``submit`` (``dsh mcp``) takes the async batches instead, with its own ``description``.
    """

    name = "ask_user_question"

    def __init__(self, *, submit: Submit | None = None, description: str = DESCRIPTION) -> None:
        self.submit = submit
        self.description = description

    def parameters(self) -> dict[str, Any]:
        return PARAMETERS

    def decode(self, arguments: object) -> AskCall:
        return decode_call(arguments)

    async def run(self, args: AskCall, ctx: ToolContext) -> str:
        request = AskUserQuestionRequest(
            questions=args.questions, agent=ctx.agent, signal=ctx.signal, call_id=ctx.call_id,
        )
        ticket = None
        if args.delivery == "async" and self.submit is not None:
            ticket = self.submit(request, ctx)
        # a resumed call (rpc_id given) asks again the way it first asked: it is a wait one
        elif args.delivery == "async" and ctx.rpc_id is None:
            ticket = ctx.user_interaction.later.submit(request)
        if ticket is not None:
            return f'{{"accepted":true,"ticket":"{ticket}"}}'  # minted: JSON-safe as it is
        answer = await ctx.user_interaction.ask(request, rpc_id=ctx.rpc_id)
        return answer.to_compact_json()
