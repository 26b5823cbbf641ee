"""The model-facing tool ``ask_user_question``: forgiving decoding, then the seam."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from dsh_cli.core.shapes import format_validation_error
from dsh_cli.interaction import ELICITATION_FIELDS, AskUserQuestionItem, AskUserQuestionRequest
from dsh_cli.interaction.validation import LIMITS
from dsh_cli.tools.registry import INVALID_ARGS, Tool, ToolContext, ToolError, loads_arguments

__all__ = ["DESCRIPTION", "PARAMETERS", "AskUserQuestionTool"]

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
        }
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


def decode_questions(arguments: object) -> list[AskUserQuestionItem]:
    """Raw tool arguments to question items, or ``INVALID_ARGS`` naming the path."""
    if isinstance(arguments, str):
        arguments = loads_arguments(arguments, "arguments") if arguments.strip() else {}
    if not isinstance(arguments, dict):
        raise ToolError("arguments: expected an object with a 'questions' list", INVALID_ARGS)
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


class AskUserQuestionTool(Tool[list[AskUserQuestionItem]]):
    """Forwards ``{questions, agent, signal}`` to ``ctx.user_interaction.ask()``."""

    name = "ask_user_question"
    description = DESCRIPTION

    def parameters(self) -> dict[str, Any]:
        return PARAMETERS

    def decode(self, arguments: object) -> list[AskUserQuestionItem]:
        return decode_questions(arguments)

    async def run(self, args: list[AskUserQuestionItem], ctx: ToolContext) -> str:
        request = AskUserQuestionRequest(
            questions=args, agent=ctx.agent, signal=ctx.signal, call_id=ctx.call_id,
        )
        answer = await ctx.user_interaction.ask(request, rpc_id=ctx.rpc_id)
        return answer.to_compact_json()
