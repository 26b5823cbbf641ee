"""The ``dsh`` command: a Click group whose subcommands load only when used.

    groups.py          a command group whose ``--help`` lists its commands whole, in order
    options.py         the options shared by the agent commands (``chat``, ``run``, ``web``)
    chat.py            ``dsh chat`` and ``dsh demo``
    run.py             ``dsh run``: one non-interactive agent run for scripts and CI
    web.py             ``dsh web``: the chat in the browser
    ask.py             ``dsh ask``: a question batch in, the answer batch out
    acp.py             ``dsh acp``: dsh's agent for editors (Agent Client Protocol)
    mcp.py             ``dsh mcp``: the MCP server whose questions a human answers at a desk
    mcp_install.py     ``dsh mcp install AGENT``: this dsh added to an agent's configuration
    mcp_login.py       ``dsh mcp login`` and ``logout``: a remote MCP server's login
    attach.py          ``dsh attach``: the desk, an inbox of every ``dsh mcp``
    hub.py             ``dsh hub token add | list | rm``: who may reach a team's hub
    history.py         ``dsh history``: past question batches of every session
    history_hub.py     ``dsh history --hub URL``: a team hub's audit, read page by page
    sessions.py        ``dsh sessions list | show | rm``: the stored sessions
    permissions.py     ``dsh permissions list | rm``: remembered "always" and trusted projects
    schema.py          ``dsh schema``: the JSON schemas of the question and the answer

Each subcommand lives in a module of its own that imports nothing heavy at import time,
so ``dsh --help`` and ``dsh --version`` stay as fast as a bare Click app.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import click

from dsh_cli import __version__
from dsh_cli.cli.chat import chat_options

__all__ = ["COMMANDS", "main"]

# name -> (module:attribute, short help shown by ``dsh --help`` without importing it), in
# the order ``--help`` lists them: talking to the model, then other agents, then records
COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("dsh_cli.cli.chat:chat", "Interactive chat; questions drawn in the terminal."),
    "demo": ("dsh_cli.cli.chat:demo", "Chat with the built-in offline demo model."),
    "run": ("dsh_cli.cli.run:run", "One non-interactive agent run, for scripts and CI."),
    "ask": ("dsh_cli.cli.ask:ask", "Ask a question batch; print the answer on stdout."),
    "web": ("dsh_cli.cli.web:web", "Chat in the browser; questions in a web composer."),
    "acp": ("dsh_cli.cli.acp:acp", "The agent for editors: an Agent Client Protocol agent."),
    "mcp": ("dsh_cli.cli.mcp:mcp", "An MCP server: other agents ask, you answer at the desk."),
    "attach": ("dsh_cli.cli.attach:attach", "The desk: answer the questions of every dsh mcp."),
    "hub": ("dsh_cli.cli.hub:hub", "A team's hub: its agents' and humans' tokens."),
    "history": ("dsh_cli.cli.history:history",
                "Past questions and answers: who answered, and when."),
    "sessions": ("dsh_cli.cli.sessions:sessions", "List, show or remove stored sessions."),
    "permissions": ("dsh_cli.cli.permissions:permissions",
                    "List or undo remembered \"always\" grants and trusted projects."),
    "schema": ("dsh_cli.cli.schema:schema", "Print the JSON schema of ask_user_question."),
}
HELP_SUMMARY = "The help of dsh, or of a command (`dsh help run`)."


class LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand is invoked or inspected."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "help":  # `dsh help [COMMAND]`, as git and gh take it
            return help_command
        if cmd_name not in COMMANDS:
            return None
        path, _ = COMMANDS[cmd_name]
        module_name, attribute = path.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The ``dsh`` process: the command with start-up's collection paused (core.startup)."""
        # only the process entry: Click's test runner and an embedding program call ``main``
        # and keep their own collector as it is
        from dsh_cli.core.startup import hold_collection, release_collection

        hold_collection()
        try:
            return super().__call__(*args, **kwargs)
        finally:
            release_collection()  # a command that ran no event loop

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            raise click.UsageError(_unknown_command(args), ctx)
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            raise _closer_options(error) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as error:
            raise _closer_options(error) from None
        except BrokenPipeError:  # `dsh … | head -1` ends quietly, as the shell's tools do
            from dsh_cli.core.streams import stdout_gone

            # (Click's own handling exits 1, which reads as a failure under pipefail)
            raise click.exceptions.Exit(stdout_gone()) from None

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Usage, what dsh is, the commands, then the options (chat's, ~20) and examples."""
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_commands(ctx, formatter)
        click.Command.format_options(self, ctx, formatter)
        self.format_epilog(ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [*((name, COMMANDS[name][1]) for name in self.list_commands(ctx)),
                ("help", HELP_SUMMARY)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _unknown_command(args: list[str]) -> str:
    """What to say for ``dsh WORD …``: the command meant, or how to ask the agent."""
    import difflib
    import shlex

    name = args[0]
    close = difflib.get_close_matches(name, [*COMMANDS, "help"], n=1, cutoff=0.7)
    if close:
        return f"no such command {name!r}; did you mean `dsh {close[0]}`?"
    prompt = shlex.quote(" ".join(args))
    return (f"no such command {name!r}; to ask the agent, run `dsh run {prompt}` (one "
            "answer), or `dsh` and type it at the prompt; `dsh --help` lists the commands")


def _closer_options(error: click.NoSuchOption) -> click.NoSuchOption:
    """The error again, suggesting only a really close option (Click's cutoff: --bogus → --host)."""
    import difflib

    command = error.ctx.command if error.ctx is not None else None
    names = [name for param in (command.params if command else [])
             if isinstance(param, click.Option) and not param.hidden
             for name in (*param.opts, *param.secondary_opts)]
    close = difflib.get_close_matches(error.option_name, names, n=3, cutoff=0.75)
    # possibilities is Final from Click 8.5: a new error, whose own matching keeps all of these
    return click.NoSuchOption(error.option_name, error.message, close, error.ctx)


@click.command("help", add_help_option=False)
@click.argument("names", nargs=-1)
@click.pass_context
def help_command(ctx: click.Context, names: tuple[str, ...]) -> None:
    """Show the help of dsh, or of a command (`dsh help mcp list`)."""
    parent = ctx.parent
    assert parent is not None
    command: click.Command = parent.command
    context = parent
    for name in names:
        sub = (command.get_command(context, name)
               if isinstance(command, click.Group) else None)
        if sub is None or sub is help_command:
            raise click.UsageError(f"no such command {' '.join(names)!r}; `dsh --help` "
                                   "lists the commands", ctx)
        context = click.Context(sub, info_name=name, parent=context)
        command = sub
    click.echo(command.get_help(context))


EXAMPLES = """\b
Examples:
  dsh                                  chat (the offline demo when no API key is set)
  dsh run -m demo "plan a project"     one run for scripts; stdout gets the answer
  dsh ask -q "Deploy?" -o yes -o no    ask one question from a shell script
  dsh mcp install claude               let Claude Code ask you at `dsh attach`
  dsh help run                         the options of one command
"""


@click.group(
    cls=LazyGroup,
    epilog=EXAMPLES,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "-V", "--version", prog_name="dsh")
@chat_options
@click.pass_context
def main(ctx: click.Context, /, **options: object) -> None:
    """dsh: an agent harness that asks you structured questions when it must.

    With no command, `dsh` is `dsh chat` and takes every option of it (`dsh -m demo`).
    See `man dsh` for the whole manual.
    """
    # pydantic looks for plugins by scanning every installed distribution's entry points
    # when dsh builds its first model (~20 ms before a question is drawn); dsh uses none.
    # Set before any model is built; a user who wants them sets the variable themselves.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    given = [name for name, value in options.items()
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if ctx.invoked_subcommand is not None:
        if given:  # `dsh -m x run …` would silently drop -m: say where it belongs
            raise click.UsageError(f"chat options go after a command: dsh "
                                   f"{ctx.invoked_subcommand} [OPTIONS]")
        return
    command = ctx.command.get_command(ctx, "chat")  # type: ignore[attr-defined]
    if command is None:
        raise click.UsageError("chat is not available in this build")
    ctx.invoke(command, **options)
