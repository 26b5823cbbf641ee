"""``dsh mcp``: the MCP server whose ``ask_user_question`` a human answers at ``dsh attach``.

stdout carries MCP messages only; every diagnostic is one stderr line. This module parses
the options; ``mcp_server/process.py`` wires and serves the process (its answer source is
the ``MCP`` door of the answer-source table: ``--answers FILE``, ``--web``, else the desk).
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import click

from dsh_cli.cli.groups import CommandGroup
from dsh_cli.cli.options import QUESTION_TIMEOUT, QUESTION_TIMEOUT_HELP, web_options
from dsh_cli.core.lines import for_terminal

__all__ = ["mcp"]


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
@click.option("--hub", "hub_url", metavar="URL",
              help="Forward to a dsh hub's /mcp (agent token from DSH_HUB_TOKEN or "
                   "--hub-token-file).")
@click.option("--hub-token-file", "hub_token_file", metavar="PATH",
              help="With --hub: read the agent token from PATH.")
@click.option("--insecure-http", is_flag=True,
              help="With --hub: allow plain http to another machine.")
@functools.partial(web_options, port_help="Port for --http, else for --web (default: any "
                   "free port).")
@click.pass_context
def mcp(ctx: click.Context, answers_path: str | None, web: bool, wait_seconds: float,
        question_timeout: float | None, http: bool, http_port: int | None,
        hub_url: str | None, hub_token_file: str | None, insecure_http: bool, host: str,
        port: int, open_browser: bool | None) -> None:
    """An MCP server: agents ask, you answer at `dsh attach`.

    With a subcommand (`dsh mcp list`), the MCP servers dsh's own agent uses instead.
    """
    if ctx.invoked_subcommand is not None:
        return
    if hub_url is not None:
        _forward(hub_url, hub_token_file, insecure_http,
                 also=[name for name, given in (("--answers", answers_path is not None),
                                                ("--web", web), ("--http", http)) if given])
        return
    if hub_token_file is not None or insecure_http:
        raise click.UsageError("--hub-token-file and --insecure-http go with --hub URL")
    from dsh_cli.mcp_server.process import McpOptions, serve
    from dsh_cli.session.interrupts import on_termination, run_main

    # one --port: the HTTP endpoint's with --http (the web page then takes a free one)
    options = McpOptions(answers_path=answers_path, web=web, wait=wait_seconds,
                         question_timeout=question_timeout, http=http,
                         http_port=(port if http else 0) if http_port is None else http_port,
                         host=host, web_port=0 if http else port, open_browser=open_browser)
    # ctrl-c cancels no turn of a human's own here: it ends the server, as SIGTERM does
    sys.exit(run_main(serve(options, on_termination=functools.partial(on_termination,
                                                                      sigint=True))))


def _forward(url: str, token_file: str | None, insecure_http: bool, *, also: list[str]) -> None:
    """``dsh mcp --hub URL``: a stdio server forwarding to the hub (``mcp_server/forward.py``)."""
    if also:
        raise click.UsageError(f"--hub forwards to the hub, which answers: it cannot be "
                               f"combined with {', '.join(also)}")
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.mcp_server.forward import forward_stdio
    from dsh_cli.mcp_server.hub_target import hub_target
    from dsh_cli.session.interrupts import run_main

    try:
        target = hub_target(url, token_file=token_file, insecure_http=insecure_http)
    except HarnessError as error:
        report(error, sys.stderr)
        sys.exit(2)
    sys.exit(run_main(forward_stdio(target)))


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
