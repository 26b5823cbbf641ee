"""``dsh mcp login SERVER`` and ``dsh mcp logout SERVER``: a remote MCP server's login.

The server is found in the same files as ``dsh mcp list`` (``--mcp-config``,
``--mcp-project``); the tokens go to the config directory's ``mcp-tokens.json`` (0600),
never to stdout, the session store or a log. The authorization URL goes to stderr, and
to the browser where one can open (``--open``/``--no-open``); with none, paste the address
the browser was sent back to.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from dsh_cli.core.errors import USAGE, format_line
from dsh_cli.core.lines import notice

__all__ = ["login", "logout"]

LOGIN_TIMEOUT = 300.0  # seconds for the human to finish in the browser


def _say(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


def _servers(function: Any) -> Any:
    function = click.option("--mcp-project", is_flag=True,
                            help="Also read .mcp.json of this directory (trusted).")(function)
    return click.option("--mcp-config", "mcp_config", multiple=True, metavar="FILE",
                        help="Also read MCP servers from FILE (repeatable).")(function)


@click.command("login")
@click.argument("server")
@_servers
@click.option("--open/--no-open", "open_browser", default=None,
              help="Open the authorization page in a browser (default: when a display is).")
@click.option("--timeout", type=click.FloatRange(min=1), default=LOGIN_TIMEOUT,
              metavar="SECONDS", help="Give up after SECONDS without an answer (300).")
def login(server: str, mcp_config: tuple[str, ...], mcp_project: bool,
          open_browser: bool | None, timeout: float) -> None:
    """Log in to a remote MCP server (OAuth in the browser); the tokens are kept 0600."""
    from dsh_cli.session.interrupts import run_main

    sys.exit(run_main(_login(server, mcp_config, mcp_project, open_browser, timeout)))


@click.command("logout")
@click.argument("server")
@_servers
def logout(server: str, mcp_config: tuple[str, ...], mcp_project: bool) -> None:
    """Forget a remote MCP server's login (its tokens and registration)."""
    from dsh_cli.config import config_dir
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.mcp_client.login import log_out

    try:
        config = _find(server, mcp_config, mcp_project)
    except HarnessError as error:
        _say(format_line(error.code, error.message))
        sys.exit(2)
    try:
        forgot = log_out(config, config_dir())
    except HarnessError as error:  # a token file that cannot be trusted is left as it is
        _say(format_line(error.code, error.message))
        sys.exit(1)
    _say(notice(f"{server}: logged out" if forgot else f"{server}: was not logged in"))


def _find(server: str, mcp_config: tuple[str, ...], mcp_project: bool) -> Any:
    """The named http server's entry; ``UsageError`` for an unknown or stdio one."""
    from dsh_cli.config import load_settings
    from dsh_cli.core.errors import UsageError
    from dsh_cli.core.sanitize import sanitize_line
    from dsh_cli.session.tools import plan_tools

    plan = plan_tools(load_settings(), {"mcp_config": mcp_config, "mcp_project": mcp_project},
                      sys.stderr)
    found = {config.name: config for config in plan.servers}
    config = found.get(server)
    if config is None:
        known = ", ".join(sorted(found)) or "none"
        raise UsageError(f"no MCP server {sanitize_line(server)!r} is configured "
                         f"(configured: {known})")
    if config.url is None:
        raise UsageError(f"{server} is a stdio server: only http servers log in")
    return config


async def _login(server: str, mcp_config: tuple[str, ...], mcp_project: bool,
                 open_browser: bool | None, timeout: float) -> int:
    from dsh_cli.config import config_dir
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.sanitize import sanitize_line
    from dsh_cli.mcp_client.login import log_in
    from dsh_cli.sources.surroundings import browser_available

    try:
        config = _find(server, mcp_config, mcp_project)
    except HarnessError as error:
        _say(format_line(error.code, error.message))
        return 2
    key = config.oauth.own_login
    if key is not None:  # a browser login would sit beside one never presented
        _say(format_line(USAGE, f"{server} logs in by itself (oauth.{key}): there is "
                                  "nothing for dsh mcp login to do"))
        return 2
    launch = browser_available(os.environ) if open_browser is None else open_browser

    def show(url: str) -> None:
        _say(notice(f"to log in to {server}, open this URL in a browser: {sanitize_line(url)}"))
        if not launch and sys.stdin.isatty():
            _say(notice("then paste here the address the browser was sent back to"))

    async def browse(url: str) -> None:
        import webbrowser

        try:
            webbrowser.open(url)
        except webbrowser.Error:
            pass

    try:
        await log_in(config, config_dir(), show=show, browse=browse if launch else None,
                     paste=sys.stdin if not launch and sys.stdin.isatty() else None,
                     timeout=timeout)
    except HarnessError as error:
        _say(format_line(error.code, f"{server}: {sanitize_line(error.message)}"))
        return 1
    _say(notice(f"{server}: logged in"))
    return 0
