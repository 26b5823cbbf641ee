"""``dsh schema``: the JSON schema of ``ask_user_question``'s parameters, or of the answer."""

from __future__ import annotations

import json

import click


@click.command()
@click.option("--answer", is_flag=True, help="Print the schema of the answer batch instead.")
def schema(answer: bool) -> None:
    """Print the bare JSON-schema object of ask_user_question's parameters."""
    if answer:
        from dsh_cli.interaction import AskUserQuestionAnswer

        document = AskUserQuestionAnswer.model_json_schema()
    else:
        from dsh_cli.tools.ask_user_question import PARAMETERS

        document = PARAMETERS
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))
