"""``dsh attach``: the desk where the human answers every ``dsh mcp`` of theirs.

The interactive terminal UI when stdin and stdout are a terminal (``--plain`` for lines,
also used with ``TERM=dumb`` or without a terminal); ``--jsonl`` for a program.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["attach"]


@click.command()
@click.option("--plain", is_flag=True, help="Plain line prompts instead of the terminal UI.")
@click.option("--jsonl", is_flag=True,
              help="The desk for a program: relay.md question events and frames on stdio.")
@click.option("--web", is_flag=True, help="Also print the URL of each dsh mcp that asks in "
                                          "the browser.")
def attach(plain: bool, jsonl: bool, web: bool) -> None:
    """Answer the questions of every `dsh mcp` here, one batch at a time."""
    from dsh_cli.session.interrupts import run_main

    if plain and jsonl:
        raise click.UsageError("--plain and --jsonl cannot be combined")
    sys.exit(run_main(_main(plain=plain, jsonl=jsonl, web=web)))


async def _main(*, plain: bool, jsonl: bool, web: bool) -> int:
    import os

    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.desk.channel import desk_dir

    try:
        directory = desk_dir()
    except HarnessError as error:
        report(error, sys.stderr)
        return 2
    # stderr: stdout is the desk's (or, with --jsonl, the program's protocol)
    sys.stderr.write(f"dsh: desk listening in {directory} for every dsh mcp of uid "
                     f"{os.getuid()}\n")
    sys.stderr.flush()
    if jsonl:
        from dsh_cli.desk.jsonl import JsonlDesk

        return await JsonlDesk(directory=directory).run()
    from dsh_cli.config import load_settings
    from dsh_cli.sources.surroundings import dumb_terminal

    try:
        notify = load_settings().notify
    except HarnessError as error:
        report(error, sys.stderr)
        return 2
    on_terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if plain or not on_terminal or dumb_terminal(os.environ):
        return await _plain_desk(notify, web, directory)
    return await _terminal_desk(notify, web, directory)


async def _plain_desk(notify: str, web: bool, directory: Path) -> int:
    from dsh_cli.chat.alert import QuestionAlert
    from dsh_cli.desk.desk import Desk, ask_with, stdin_closed_waiter
    from dsh_cli.providers.plain import PlainProvider
    from dsh_cli.providers.plain_permission import PlainPermissionPrompt

    provider = PlainProvider(sys.stdin, sys.stdout)
    prompt = PlainPermissionPrompt(provider.lines, sys.stdout)
    alert = QuestionAlert(sys.stdout, notify)
    ask = ask_with(provider)

    async def ask_and_alert(ui: Any, request: Any) -> Any:
        ui.events.subscribe(alert)
        return await ask(ui, request)

    async def permit(request: Any) -> Any:
        return await prompt.decide(request, "")

    desk = Desk(output=sys.stdout, ask=ask_and_alert, permit=permit, web=web,
                idle=stdin_closed_waiter(provider.lines.readline), directory=directory)
    return await desk.run()


async def _terminal_desk(notify: str, web: bool, directory: Path) -> int:
    from dsh_cli.desk.desk import Desk, ask_with, tty_idle
    from dsh_cli.providers.terminal import terminal_provider
    from dsh_cli.providers.terminal.permission import TerminalPermissionPrompt

    with terminal_provider("stdout", notify=notify, desk=True) as provider:
        prompt = TerminalPermissionPrompt(input=provider.input, output=provider.output,
                                          notify=notify)

        async def permit(request: Any) -> Any:
            return await prompt.decide(request, "")

        desk = Desk(output=sys.stdout, ask=ask_with(provider), permit=permit, idle=tty_idle,
                    web=web, directory=directory)
        return await desk.run()
