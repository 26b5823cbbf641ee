"""``dsh schema``: the JSON schema of ``ask_user_question``'s parameters, of a ``dsh ask``
request, or of the answer."""

from __future__ import annotations

import copy
import json
from typing import Any

import click

_STRING: dict[str, Any] = {"type": "string"}
_INTEGER: dict[str, Any] = {"type": "integer", "minimum": 0}

# What a ``dsh ask`` request may give a question beyond the model's fields (an MCP server's
# form uses them too); a test checks these against the fields ``dsh ask`` accepts.
ASK_FIELDS: dict[str, dict[str, Any]] = {
    "detail": {"type": "string", "description": "Supporting text shown with the question."},
    "other": {"type": "boolean", "default": True,
              "description": "false: a strict choice, no free-text Other answer "
                             "(dsh ask --no-other)."},
    "required": {"type": "boolean", "default": False,
                 "description": "true: the question cannot be skipped (unless it has a "
                                "default)."},
    "default": {
        "type": "object", "additionalProperties": False,
        "description": "The answer a skip takes, shown with the question: option labels, "
                       "or custom text.",
        "properties": {"selected": {"type": "array", "items": _STRING}, "custom": _STRING},
    },
    "rule": {
        "type": "object", "additionalProperties": False,
        "description": "What typed text must be; a UI says so and asks again.",
        "properties": {
            "kind": {"enum": ["string", "number", "integer"], "default": "string"},
            "min_length": _INTEGER, "max_length": _INTEGER, "pattern": _STRING,
            "format": {"enum": ["email", "uri", "date", "date-time"]},
            "minimum": {"type": "number"}, "maximum": {"type": "number"},
        },
    },
    "min_items": {**_INTEGER, "description": "A multi-select: choose at least this many."},
    "max_items": {**_INTEGER, "description": "A multi-select: choose at most this many."},
    "warning": {"type": "string", "description": "A line every UI shows with the question."},
    "multiSelect": {"type": "boolean", "description": "Claude Code's spelling of "
                                                      "multi_select."},
}


def ask_request_schema() -> dict[str, Any]:
    """The schema of a ``dsh ask`` request: the model's questions with every field dsh ask
    accepts, and nothing else (no ``delivery``)."""
    from dsh_cli.tools.ask_user_question import PARAMETERS

    document = copy.deepcopy(PARAMETERS)
    del document["properties"]["delivery"]
    document["additionalProperties"] = False
    item = document["properties"]["questions"]["items"]
    item["properties"].update(copy.deepcopy(ASK_FIELDS))
    item["additionalProperties"] = False
    item["properties"]["options"]["items"]["additionalProperties"] = False
    return document


class SchemaCommand(click.Command):
    """``--help`` ends with the caps the validator enforces, read from its ``LIMITS``."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from dsh_cli.interaction.validation import limits_text

        formatter.write_paragraph()
        formatter.write_text(f"Limits, enforced for every request: {limits_text()}.")
        formatter.write_paragraph()
        formatter.write_text("A dsh ask request may also give a question "
                             f"{', '.join(name for name in ASK_FIELDS if name != 'multiSelect')}"
                             " (models are not offered them): --ask prints its schema.")
        super().format_epilog(ctx, formatter)


@click.command(cls=SchemaCommand)
@click.option("--ask", "ask_request", is_flag=True,
              help="Print the schema of a dsh ask request (every field it accepts).")
@click.option("--answer", is_flag=True, help="Print the schema of the answer batch instead.")
def schema(ask_request: bool, answer: bool) -> None:
    """Print the bare JSON-schema object of ask_user_question's parameters."""
    if ask_request and answer:
        raise click.UsageError("use --ask or --answer, not both")
    if answer:
        from dsh_cli.interaction import AskUserQuestionAnswer

        document = AskUserQuestionAnswer.model_json_schema()
    elif ask_request:
        document = ask_request_schema()
    else:
        from dsh_cli.tools.ask_user_question import PARAMETERS

        document = PARAMETERS
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))
