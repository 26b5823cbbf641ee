"""``dsh attach``: the desk where the human answers every ``dsh mcp`` of theirs, an inbox.

The interactive terminal list when stdin and stdout are a terminal (``--plain`` for lines,
also used with ``TERM=dumb`` or without a terminal); ``--jsonl`` for a program; ``--web``
for a browser on 127.0.0.1 (``desk/web/``).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from dsh_cli.cli.options import web_options
from dsh_cli.core.lines import notice

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.desk.desk import Desk
    from dsh_cli.desk.hub_link import HubAddress
    from dsh_cli.desk.notify import DeskNotifier

__all__ = ["attach"]


@click.command()
@click.option("--plain", is_flag=True,
              help="The inbox as plain lines (type an entry's number to open it) instead of "
                   "the terminal UI.")
@click.option("--jsonl", is_flag=True,
              help="The desk for a program: JSON lines on stdio, the events and frames of "
                   "`man dsh` (JSON-LINES PROTOCOL) plus the inbox's "
                   "(docs/internals.md, \"The attach inbox\").")
@click.option("--web", is_flag=True,
              help="The inbox in a browser (on 127.0.0.1 unless --host; prints its URL; ctrl-c "
                   "closes it).")
@functools.partial(web_options, port_help="Port for --web (default: any free port).")
@click.option("--hub", "hub_url", metavar="URL",
              help="The inbox of a dsh hub instead of this machine's servers, with a human's "
                   "hub token from DSH_HUB_TOKEN or --hub-token-file.")
@click.option("--hub-token-file", type=click.Path(dir_okay=False), metavar="PATH",
              help="Read the hub token from this file (never give it on the command line).")
@click.option("--insecure-http", is_flag=True,
              help="Allow --hub over plain http to a host that is not this machine (the "
                   "token then crosses the network readable).")
@click.pass_context
def attach(ctx: click.Context, plain: bool, jsonl: bool, web: bool, host: str, port: int,
           open_browser: bool | None, hub_url: str | None, hub_token_file: str | None,
           insecure_http: bool) -> None:
    """The inbox of every `dsh mcp` here: open any pending question and answer it.

    Desks and servers meet in a directory per user id, whatever HOME is: every desk of
    your uid sees every agent of your uid. To keep desks apart, give each (and its
    agents' `dsh mcp`) its own DSH_HOME. With --hub URL the inbox is a dsh hub's instead:
    every entry routed to you, from agents anywhere.
    """
    from dsh_cli.session.interrupts import run_main

    if sum((plain, jsonl, web)) > 1:
        raise click.UsageError("--plain, --jsonl and --web cannot be combined")
    given = [flag for name, flag in (("host", "--host"), ("port", "--port"),
                                     ("open_browser", "--open/--no-open"))
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if given and not web:
        raise click.UsageError(f"{given[0]} needs --web")
    hub = _hub_address(hub_url, hub_token_file, insecure_http) if hub_url is not None \
        else None
    if hub is None and (hub_token_file is not None or insecure_http):
        raise click.UsageError(f"{'--hub-token-file' if hub_token_file else '--insecure-http'}"
                               " needs --hub")
    sys.exit(run_main(_main(plain=plain, jsonl=jsonl, web=web, host=host, port=port,
                            open_browser=open_browser, hub=hub)))


def _hub_address(url: str, token_file: str | None, insecure_http: bool) -> HubAddress:
    """The hub's /desk and the human token, or a usage error saying what is wrong."""
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.hub_address import hub_endpoint, hub_token
    from dsh_cli.desk.hub_link import HubAddress, desk_url

    try:
        parsed = hub_endpoint(url, insecure_http=insecure_http, whose="human")
        token = hub_token(token_file, whose="human")
    except HarnessError as error:
        raise click.UsageError(error.message) from None
    return HubAddress(desk_url(parsed.url), token, parsed.where)


async def _main(*, plain: bool, jsonl: bool, web: bool, host: str = "127.0.0.1",
                port: int = 0, open_browser: bool | None = None,
                hub: HubAddress | None = None) -> int:
    import os

    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.desk.channel import desk_dir

    where: dict[str, Any]  # where the desk finds what is pending: a hub, or the directory
    if hub is not None:
        where = {"hub": hub}
        said = f"desk attached to the hub at {hub.where}"
    else:
        try:
            directory = desk_dir()
        except HarnessError as error:
            report(error, sys.stderr)
            return 2
        where = {"directory": directory}
        said = f"desk listening in {directory} for every dsh mcp of uid {os.getuid()}"
    # stderr: stdout is the desk's (or, with --jsonl, the program's protocol)
    sys.stderr.write(notice(said) + "\n")
    sys.stderr.flush()
    if jsonl:
        from dsh_cli.desk.jsonl import JsonlDesk

        return await JsonlDesk(report=_stderr_line, **where).run()
    if web:
        from dsh_cli.desk.web import WebDesk
        from dsh_cli.providers.web import WebError
        from dsh_cli.sources.surroundings import browser_available

        launch = browser_available(os.environ) if open_browser is None else open_browser
        try:
            return await WebDesk(host=host, port=port, open_browser=launch, stderr=sys.stderr,
                                 **where).run()
        except WebError as error:
            report(error, sys.stderr)
            return 2
    from dsh_cli.config import load_settings
    from dsh_cli.sources.surroundings import dumb_terminal

    try:
        settings = load_settings()
    except HarnessError as error:
        report(error, sys.stderr)
        return 2
    on_terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if plain or not on_terminal or dumb_terminal(os.environ):
        return await _plain_desk(settings, where)
    return await _terminal_desk(settings, where)


def _stderr_line(line: str) -> None:
    """A desk's line for the human beside a program's protocol on stdout."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _notifier(settings: Settings, *, terminal: bool,
              above: Callable[[Callable[[], None]], None] | None = None) -> DeskNotifier:
    """The desk's notifications: the terminal's own escape only on a terminal desk (a plain
    desk rings its bell per question), ``notify_command`` on both; ``above`` writes a
    failed command's line where a list on screen is drawn again after it."""
    import os

    from dsh_cli.desk.notify import DeskNotifier, protocol

    def write(sequence: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(sequence)
            sys.stdout.flush()

    def say(line: str) -> None:
        def put() -> None:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(line + "\n")
                sys.stderr.flush()

        (above or (lambda put: put()))(put)

    chosen = {"auto": protocol(os.environ), "osc9": "osc9", "bell": "bell"}
    kind = chosen.get(settings.notify, "none") if terminal else "none"
    return DeskNotifier(write=write, say=say, kind=kind, tmux=bool(os.environ.get("TMUX")),
                        command=list(settings.notify_command) or None,
                        delay=settings.notify_delay)


async def _run(desk: Desk, notifier: DeskNotifier) -> int:
    try:
        return await desk.run()
    finally:
        await notifier.close()


async def _plain_desk(settings: Settings, where: dict[str, Any]) -> int:
    from dsh_cli.chat.alert import QuestionAlert
    from dsh_cli.desk.desk import Desk, ask_with
    from dsh_cli.desk.inbox_plain import PlainInbox
    from dsh_cli.providers.plain import PlainProvider
    from dsh_cli.providers.plain_permission import PlainPermissionPrompt

    provider = PlainProvider(sys.stdin, sys.stdout)
    prompt = PlainPermissionPrompt(provider.lines, sys.stdout)
    alert = QuestionAlert(sys.stdout, settings.notify)
    notifier = _notifier(settings, terminal=False)

    async def permit(request: Any) -> Any:
        return await prompt.decide(request, "")

    def arrived(entry: Any) -> None:
        alert.ring()  # the bell per entry that arrives, as the list grows
        notifier.arrived(entry.event, lambda: desk.waiting(entry))

    desk = Desk(output=sys.stdout, ask=ask_with(provider), permit=permit,
                picker=PlainInbox(sys.stdout, provider.lines.readline), on_arrival=arrived,
                **where)
    return await _run(desk, notifier)


async def _terminal_desk(settings: Settings, where: dict[str, Any]) -> int:
    from dsh_cli.desk.desk import Desk, ask_with
    from dsh_cli.desk.inbox_terminal import TerminalInbox, TitleCount
    from dsh_cli.desk.notify import FOCUS_OFF
    from dsh_cli.providers.terminal import terminal_provider
    from dsh_cli.providers.terminal.permission import TerminalPermissionPrompt

    picker: Any = None  # the list, made below: a notify_command's line is written above it
    notifier = _notifier(settings, terminal=True,
                         above=lambda put: picker.print_above(put) if picker else put())
    # the notifier alerts (on arrival, when the desk is not looked at); the UI stays quiet
    with terminal_provider("stdout", notify="none", desk=True) as provider:
        prompt = TerminalPermissionPrompt(input=provider.input, output=provider.output,
                                          back=True)

        async def permit(request: Any) -> Any:
            return await prompt.decide(request, "")

        picker = TerminalInbox(input=provider.input, output=provider.output,
                               focus=notifier.focus)
        desk = Desk(output=sys.stdout, ask=ask_with(provider), permit=permit, picker=picker,
                    **where,
                    on_arrival=lambda entry: notifier.arrived(entry.event,
                                                              lambda: desk.waiting(entry)))
        title = TitleCount(desk.inbox, notifier.write)
        # raw for the desk's whole life, not only while one of its screens runs: between a
        # question or a decision and the list the terminal was cooked for a few milliseconds,
        # where a ctrl-d typed is swallowed as end-of-file and a ctrl-c is a signal
        try:
            with provider.input.raw_mode():
                return await _run(desk, notifier)
        finally:
            title.close()  # the terminal's own title back
            notifier.write(FOCUS_OFF)  # however the desk ends, the terminal reports no more
