"""``dsh mcp``: the MCP server whose ``ask_user_question`` a human answers at ``dsh attach``.

stdout carries MCP messages only; every diagnostic is one stderr line. Answer source,
first that applies: ``--answers FILE``, ``--web``, otherwise the attach desk.
``approve_tool_use`` is decided at the desk only (``--answers`` and ``--web`` give it nothing
to ask, so every request is denied, saying why).
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

import click

from dsh_cli.cli.groups import CommandGroup
from dsh_cli.cli.options import QUESTION_TIMEOUT, QUESTION_TIMEOUT_HELP, web_options
from dsh_cli.core.errors import format_line
from dsh_cli.core.lines import for_terminal, notice, warning

__all__ = ["mcp"]


def _say(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


# subcommands imported only when they run: ``dsh mcp`` itself must be ready fast
_LAZY = {"install": "dsh_cli.cli.mcp_install:install", "login": "dsh_cli.cli.mcp_login:login",
         "logout": "dsh_cli.cli.mcp_login:logout"}


class _McpGroup(CommandGroup):
    """``install``, ``login`` and ``logout`` are imported only when they run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*super().list_commands(ctx), *_LAZY]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in _LAZY:
            import importlib

            module, attribute = _LAZY[name].split(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, name)


@click.group(cls=_McpGroup, invoke_without_command=True)
@click.option("--answers", "answers_path", metavar="FILE",
              help="Answer every batch from a JSON file mapping question ids to answers.")
@click.option("--web", is_flag=True, help="Answer in the browser (the URL goes to stderr).")
@click.option("--wait", "wait_seconds", type=click.FloatRange(min=0), default=0.0,
              metavar="SECONDS",
              help="With no desk attached, wait up to SECONDS for one (default: fail at once).")
@click.option("--question-timeout", type=QUESTION_TIMEOUT, metavar="SECONDS",
              help=QUESTION_TIMEOUT_HELP)
@click.option("--http", is_flag=True,
              help="Serve Streamable HTTP on 127.0.0.1 (URL with its token on stderr).")
@click.option("--http-port", "http_port", type=int, default=None, hidden=True)  # was: --port
@functools.partial(web_options, port_help="Port for --http, else for --web (default: any "
                   "free port).")
@click.pass_context
def mcp(ctx: click.Context, answers_path: str | None, web: bool, wait_seconds: float,
        question_timeout: float | None, http: bool, http_port: int | None, host: str,
        port: int, open_browser: bool | None) -> None:
    """An MCP server: agents ask, you answer at `dsh attach`.

    With a subcommand (`dsh mcp list`), the MCP servers dsh's own agent uses instead.
    """
    if ctx.invoked_subcommand is not None:
        return
    from dsh_cli.session.interrupts import run_main

    # one --port: the HTTP endpoint's with --http (the web page then takes a free one)
    web_port = 0 if http else port
    if http_port is None:
        http_port = port if http else 0
    sys.exit(run_main(_main(answers_path=answers_path, web=web, wait=wait_seconds,
                            question_timeout=question_timeout, http=http, http_port=http_port,
                            web_host={"host": host, "port": web_port,
                                      "open_browser": open_browser})))


async def _main(*, answers_path: str | None, web: bool, wait: float,
                question_timeout: float | None, http: bool, http_port: int,
                web_host: dict[str, Any]) -> int:
    import contextlib

    if not http:
        _started_by_hand(desk=answers_path is None and not web)
    from dsh_cli.config import load_settings
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.desk.channel import DeskDirRefused
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.mcp_server.approve import ApproveService
    from dsh_cli.mcp_server.desks import DeskHub, DeskPermissions, DeskProvider
    from dsh_cli.mcp_server.server import build_server, serve_http, serve_stdio
    from dsh_cli.mcp_server.service import AskService
    from dsh_cli.session.interrupts import on_termination

    try:
        settings = load_settings(question_timeout=question_timeout)
    except HarnessError as error:
        _say(format_line(error.code, error.message))
        return 2
    ui = UserInteraction(timeout=settings.question_timeout)
    web_server: Any = None
    async with contextlib.AsyncExitStack() as stack:
        if answers_path is not None:
            from dsh_cli.providers.answers_file import AnswersFileError, AnswersFileProvider

            try:
                ui.register_provider(AnswersFileProvider.load(answers_path, report=_say))
            except AnswersFileError as error:
                _say(format_line(error.code, error.message))
                return 2
        elif web:
            web_server = await _start_web(ui, **web_host)
            stack.push_async_callback(web_server.close)
            ui.register_provider(web_server.provider)
        hub = DeskHub(ui, relay_questions=answers_path is None and not web,
                      web_url=web_server.url if web_server is not None else None, report=_say)
        try:
            await hub.start()
        except DeskDirRefused as refused:
            _say(format_line(refused.code, f"{refused.message} (no desk can reach this server)"))
        except OSError as error:
            _say(warning(f"no desk socket at {hub.path}: {error.strerror}"))
        else:
            stack.push_async_callback(hub.close)
        gate = _permission_gate(ui, settings.question_timeout)
        if hub.relay_questions:
            ui.register_provider(DeskProvider(hub, wait=wait, alert=_tty_alert))
            gate.register_provider(DeskPermissions(hub, wait=wait, alert=_tty_alert))
        store = _open_store()
        service = AskService(ui, sources=hub.sources, store=store, report=_say)
        stack.callback(service.close)
        # a signal marks pending batches interrupted before the unwinding aborts them
        stack.callback(on_termination(service.mark_interrupted, sigint=True))
        if store is not None:
            stack.callback(store.close)
        server = build_server(service, ApproveService(gate, service))
        try:
            if http:
                await serve_http(server, port=http_port, tickets=service.tickets,
                                 announce=lambda url: _say(notice(f"mcp {url}")))
            else:
                await serve_stdio(server)
        finally:  # open async batches end with the server, as waiting ones do: desks drop them
            await service.tickets.close()
    return 0


async def _start_web(ui: Any, *, host: str, port: int, open_browser: bool | None) -> Any:
    from dsh_cli.providers.web import WebHost
    from dsh_cli.sources.surroundings import browser_available

    web = WebHost(ui, host=host, port=port, stderr=sys.stderr,
                  open_browser=(browser_available(os.environ) if open_browser is None
                                else open_browser))
    await web.start()
    return web


def _permission_gate(ui: Any, timeout: float | None) -> Any:
    """``approve_tool_use``'s gate: one per process ("for this session"), "always" saved."""
    from dsh_cli.config import load_settings
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.home import approvals_file
    from dsh_cli.permissions import Approvals, PermissionGate, Rules

    # the human's own rules in config.toml ([permissions]: Bash(git status:*), Bash, ...)
    # are the broader grants; a config that cannot be read leaves every call asked
    try:
        settings = load_settings()
        rules = Rules(settings.allow, settings.ask, settings.deny)
    except HarnessError as error:
        _say(format_line(error.code, f"{error.message}; approve_tool_use asks for every call"))
        rules = Rules()
    from dsh_cli.permissions.unmatched import approve_warnings

    for line in approve_warnings(rules):  # Claude Code's tools: Bash(rm:*), Read(~/.ssh/**)
        _say(line)
    return PermissionGate(rules, approvals=Approvals(approvals_file()),
                          events=ui.events, timeout=timeout, notice=_say)


def _open_store() -> Any:
    from dsh_cli.store import SessionStore, StoreError

    try:
        return SessionStore.open()
    except StoreError as error:
        _say(format_line(error.code, f"{error.message} (batches are not recorded)"))
        return None


def _started_by_hand(*, desk: bool) -> None:
    """One stderr line when stdin is a terminal: a human started what an agent should (the
    screen would stay blank while stdout waits for MCP messages, which it keeps to itself)."""
    try:
        by_hand = sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return
    if by_hand:
        where = "; answer its questions with `dsh attach` in another terminal" if desk else ""
        _say(for_terminal(notice(f"mcp waits for an agent on stdin (an agent starts `dsh mcp` "
                                 f"as its MCP server){where}; ctrl-c to quit"), sys.stderr))


def _tty_alert() -> None:
    """``--wait`` with no desk: a bell and one line on the controlling terminal, if any."""
    import contextlib

    from dsh_cli.core.terminal_alert import encode

    with contextlib.suppress(OSError), open("/dev/tty", "w", encoding="utf-8") as tty:
        tty.write(encode("bell", "")
                  + notice("an agent is asking a question: run `dsh attach` to answer it\n"))


@mcp.command("list")
@click.option("--mcp-config", "mcp_config", multiple=True, metavar="FILE",
              help="Also read MCP servers from FILE (mcpServers JSON; repeatable).")
@click.option("--mcp-project", is_flag=True,
              help="Also read .mcp.json of this directory (and trust it from now on).")
@click.option("--json", "as_json", is_flag=True, help="A JSON array of servers for scripts.")
def list_servers(mcp_config: tuple[str, ...], mcp_project: bool, as_json: bool) -> None:
    """Start each configured MCP server and show whether it started, and its tools."""
    from dsh_cli.session.interrupts import run_main

    sys.exit(run_main(_list(mcp_config, mcp_project, as_json)))


async def _list(mcp_config: tuple[str, ...], mcp_project: bool, as_json: bool) -> int:
    import json
    import tempfile

    from dsh_cli.config import config_dir, load_settings
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.core.sanitize import sanitize_line
    from dsh_cli.session.tools import plan_tools

    try:
        settings = load_settings()
        plan = plan_tools(settings, {"mcp_config": mcp_config, "mcp_project": mcp_project},
                          sys.stderr)
    except HarnessError as error:
        report(error, sys.stderr)
        return 2
    statuses = []
    if plan.servers:
        from dsh_cli.mcp_client.toolset import McpToolset

        with tempfile.TemporaryFile("w+") as errlog:  # the servers' own chatter stays out
            # a tool left out (a bad or taken name) is news for whoever lists: stderr
            toolset = await McpToolset.start(
                plan.servers, errlog=errlog, auth_dir=config_dir(),
                notice=lambda line: click.echo(
                                   for_terminal(sanitize_line(line), sys.stderr), err=True))
            try:
                statuses = toolset.statuses
            finally:
                await toolset.close()
    if as_json:
        click.echo(json.dumps([{
            "name": status.name, "transport": status.transport, "source": status.source,
            "started": status.started, "error": status.error, "code": status.code,
            "tools": [{"name": tool.name, "description": tool.description,
                       "hints": tool.hints.to_json()} for tool in status.tools],
        } for status in statuses], ensure_ascii=True))  # exact values; no raw byte reaches a tty
        return _listed_status(statuses)
    if not statuses:
        from pathlib import Path

        from dsh_cli.mcp_client.config.servers import PROJECT_FILE

        if (Path.cwd() / PROJECT_FILE).is_file() and not mcp_project:
            click.echo(f"no MCP servers to start: this directory's {PROJECT_FILE} is not "
                       "trusted yet (dsh mcp list --mcp-project trusts and lists it)")
        else:
            click.echo("no MCP servers configured (mcp.json in the config directory, "
                       "--mcp-config FILE, or .mcp.json with --mcp-project)")
        return 0
    for status in statuses:
        count = len(status.tools)
        state = (f"{count} tool{'' if count == 1 else 's'}" if status.started
                 else "did not start")
        click.echo(f"{sanitize_line(status.name)}  {status.transport}  {state}  "
                   f"({sanitize_line(status.source)})")
        if status.error:
            line = f"{status.code}: {status.error}" if status.code else status.error
            click.echo(f"  {sanitize_line(line)}")
        for tool in status.tools:
            hints = [name.replace("_", " ") for name, on in tool.hints.to_json().items() if on]
            note = f"  [{', '.join(hints)}]" if hints else ""
            click.echo(f"  {sanitize_line(tool.name)}{note}")
    return _listed_status(statuses)


def _listed_status(statuses: list[Any]) -> int:
    """1 when a server did not start, so `dsh mcp list && …` stops on a broken config."""
    return 1 if any(not status.started for status in statuses) else 0
