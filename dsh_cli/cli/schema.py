"""``dsh schema``: the JSON schema of ``ask_user_question``'s parameters, or of the answer."""

from __future__ import annotations

import json

import click


class SchemaCommand(click.Command):
    """``--help`` ends with the caps the validator enforces, read from its ``LIMITS``."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from dsh_cli.interaction.validation import limits_text

        formatter.write_paragraph()
        formatter.write_text(f"Limits, enforced for every request: {limits_text()}.")
        formatter.write_paragraph()
        formatter.write_text("dsh ask requests may also give a question a 'detail' "
                             "(supporting text shown with it); models are not offered it.")
        super().format_epilog(ctx, formatter)


@click.command(cls=SchemaCommand)
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
