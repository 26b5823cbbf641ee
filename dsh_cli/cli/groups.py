"""A command group whose ``--help`` lists its commands as they were written, each whole."""

from __future__ import annotations

import click

__all__ = ["CommandGroup", "summary"]


def summary(command: click.Command) -> str:
    """A command's first sentence, never cut (Click cuts at the column, mid-clause)."""
    return command.get_short_help_str(limit=10_000)


class CommandGroup(click.Group):
    """Commands in the order they were added (the everyday one first), summaries whole."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary(command)) for name in self.list_commands(ctx)
                if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
