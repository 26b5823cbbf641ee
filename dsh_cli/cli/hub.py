"""``dsh hub serve``, ``dsh hub token add | list | rm`` and ``dsh hub login-link``: a team's
hub, who may reach it, and the links that sign a human's browser in.

``serve`` runs one hub process (``hub/serve.py``); the token commands make and undo the
tokens it checks, in the same store (``--store``: a SQLite file by default,
``postgresql://…`` for a store several hub processes share).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from dsh_cli.cli.groups import CommandGroup
from dsh_cli.cli.options import JSON_HELP
from dsh_cli.core.errors import USAGE, format_line
from dsh_cli.core.lines import notice

if TYPE_CHECKING:
    from dsh_cli.hub import HubStore
    from dsh_cli.hub.records import TokenKind

STORE_HELP = ("The hub's store: a SQLite file (default: hub.db in dsh's data directory) or a "
              "postgresql:// URL (its password better in PGPASSWORD or ~/.pgpass than here).")


PUBLIC_HELP = ("Where browsers reach the hub (https://HOST behind a TLS proxy): the origin "
               "of its login links and the only Host and Origin its page takes (default: "
               "[hub] public_url, else the bound URL).")
CONFIG_HELP = "Read the [hub] settings from FILE instead of dsh's config.toml."
LINK_PUBLIC_HELP = ("The hub's public URL the link starts with (default: [hub] public_url, "
                    "else http://127.0.0.1:8750).")


def _fail(code: str, message: str) -> None:
    click.echo(format_line(code, message), err=True)
    sys.exit(1)


@contextlib.contextmanager
def _store(location: str | None) -> Iterator[HubStore]:
    """The hub store, opened (and migrated); its errors one line each, exit status 1."""
    from dsh_cli.hub import HubStore, HubStoreError

    try:
        with HubStore.open(location) as store:
            yield store
    except HubStoreError as error:
        _fail(error.code, error.message)


@click.group(cls=CommandGroup)
def hub() -> None:
    """A team's hub: one place for every agent's questions, and the tokens that reach it."""


@hub.command("serve")
@click.option("--store", metavar="URL", help=STORE_HELP)
@click.option("--host", metavar="HOST", default="127.0.0.1", show_default=True,
              help="Address to listen on (plain HTTP: loopback only, unless --insecure-http).")
@click.option("--port", metavar="PORT", type=click.IntRange(0, 65535), default=8750,
              show_default=True,
              help="Port to listen on (0: any free port; the URL is printed on stderr).")
@click.option("--insecure-http", is_flag=True,
              help="Serve plain HTTP on a non-loopback address (else put a TLS proxy in front).")
@click.option("--replica", metavar="NAME",
              help="This process's name in the audit (default: HOST:PID).")
@click.option("--config", "config", metavar="FILE",
              help="Read the [hub] settings (routes, caps, retention) from FILE instead of "
                   "dsh's config.toml.")
@click.option("--retention", "retention", metavar="DAYS", type=float,
              help="Forget settled entries and their audit after DAYS (default: [hub] "
                   "retention_days, else 90; 0 keeps everything).")
@click.option("--public-url", "public", metavar="URL", help=PUBLIC_HELP)
def serve(store: str | None, host: str, port: int, insecure_http: bool,
          replica: str | None, config: str | None, retention: float | None,
          public: str | None) -> None:
    """Serve the hub: agents ask at /mcp with their tokens, until ctrl-c or SIGTERM."""
    from dsh_cli.core.errors import ConfigError
    from dsh_cli.hub.public_url import public_url
    from dsh_cli.hub.serve import HubOptions
    from dsh_cli.hub.serve import serve as serve_hub
    from dsh_cli.hub.settings import checked_retention
    from dsh_cli.session.interrupts import run_main

    try:
        days = checked_retention(retention, "--retention") if retention is not None else None
        if public is not None:  # checked here: a bad flag is a usage error, exit 2
            public_url(public, "--public-url", insecure_http=insecure_http)
    except ConfigError as error:
        click.echo(format_line(USAGE, error.message), err=True)
        sys.exit(2)
    options = HubOptions(store=store, host=host, port=port, insecure_http=insecure_http,
                         replica=replica, config=config, retention_days=days,
                         public_url=public)
    from dsh_cli.hub.desks import desk_routes

    sys.exit(run_main(serve_hub(options, extra_routes=desk_routes)))


@hub.group("token", cls=CommandGroup)
def token() -> None:
    """Make, list or remove the hub's tokens (one per agent and per human)."""


def _public_origin(public: str | None, config: str | None) -> str:
    """The origin a login link starts with: ``--public-url``, ``[hub] public_url``, or the
    default hub address; a bad one is one line, exit status 2."""
    from pathlib import Path

    from dsh_cli.config import hub_table
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.hub.public_url import public_url
    from dsh_cli.hub.serve import DEFAULT_PORT
    from dsh_cli.hub.settings import hub_settings

    try:
        if public is None:
            table, source = hub_table(Path(config) if config else None)
            public = hub_settings(table, source).public_url
            key = f"{source}: [hub] public_url"
        else:
            key = "--public-url"
        # the link is only printed here; serving it over plain http is refused by serve
        return public_url(public or f"http://127.0.0.1:{DEFAULT_PORT}", key,
                          insecure_http=True).origin
    except HarnessError as error:
        click.echo(format_line(USAGE, error.message), err=True)
        sys.exit(2)


def _login_line(link: str) -> str:
    from dsh_cli.core.limits import HUB_LOGIN_SECONDS

    return notice(f"login link for the browser desk (works once, within "
                  f"{HUB_LOGIN_SECONDS // 60} minutes): {link}")


@token.command("add")
@click.argument("name")
@click.option("--agent", is_flag=True, help="A token for an agent (its asks).")
@click.option("--human", is_flag=True, help="A token for a human (answers their teams' entries).")
@click.option("--team", metavar="TEAM", help="The human's team (routes send entries to teams).")
@click.option("--store", metavar="URL", help=STORE_HELP)
@click.option("--public-url", "public", metavar="URL", help=LINK_PUBLIC_HELP)
@click.option("--config", "config", metavar="FILE", help=CONFIG_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def add(name: str, agent: bool, human: bool, team: str | None, store: str | None,
        public: str | None, config: str | None, as_json: bool) -> None:
    """Make NAME's token and print it, this once: the hub keeps only a digest of it. A
    human's also gets a login link for the hub's browser desk (on stderr)."""
    from dsh_cli.hub.logins import login_code, login_link

    if agent == human:
        _fail(USAGE, "say whose token this is: --agent or --human (one of them)")
    if team is not None and agent:
        _fail(USAGE, "--team is for a human's token; agents reach teams through routes")
    kind: TokenKind = "agent" if agent else "human"
    origin = _public_origin(public, config) if human else None
    link = None
    with _store(store) as hub_store:
        issued = hub_store.add_token(name, kind, team)
        if origin is not None:
            link = login_link(origin, login_code(hub_store, name))
    if as_json:
        made = {"name": issued.token.name, "kind": issued.token.kind,
                "team": issued.token.team, "token": issued.secret}
        click.echo(json.dumps({**made, **({"login_link": link} if link else {})}))
        return
    click.echo(issued.secret)
    click.echo(notice(f"the {kind} token of {name}{f' (team {team})' if team else ''}, shown "
                      "this once: the hub keeps only its digest (lost: `dsh hub token rm "
                      f"{name}`, then add it again)"), err=True)
    if link is not None:
        click.echo(_login_line(link), err=True)


@hub.command("login-link")
@click.argument("name")
@click.option("--store", metavar="URL", help=STORE_HELP)
@click.option("--public-url", "public", metavar="URL", help=LINK_PUBLIC_HELP)
@click.option("--config", "config", metavar="FILE", help=CONFIG_HELP)
def login_link_command(name: str, store: str | None, public: str | None,
                       config: str | None) -> None:
    """Print a new login link for human NAME's browser: it works once, within 10 minutes,
    and becomes a session cookie (removing NAME's token ends every session)."""
    from dsh_cli.hub.logins import login_code, login_link

    origin = _public_origin(public, config)
    with _store(store) as hub_store:
        link = login_link(origin, login_code(hub_store, name))
    click.echo(link)


@token.command("list")
@click.option("--store", metavar="URL", help=STORE_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def list_tokens(store: str | None, as_json: bool) -> None:
    """List the names that have a token, their kind and team (never the tokens)."""
    from dsh_cli.core.clock import local_time

    with _store(store) as hub_store:
        found = hub_store.tokens()
    if as_json:
        click.echo(json.dumps([{"name": t.name, "kind": t.kind, "team": t.team,
                                "created_at": t.created_at} for t in found]))
        return
    if not found:
        click.echo(notice("no tokens yet: `dsh hub token add NAME --agent` makes one"), err=True)
        return
    from datetime import UTC, datetime

    names = max(4, *(len(t.name) for t in found))
    teams = max(4, *(len(t.team or "-") for t in found))
    click.echo(f"{'NAME':<{names}}  KIND   {'TEAM':<{teams}}  SINCE")
    for t in found:
        since = local_time(datetime.fromtimestamp(t.created_at, UTC).isoformat())
        click.echo(f"{t.name:<{names}}  {t.kind:<5}  {t.team or '-':<{teams}}  {since}")


@token.command("rm")
@click.argument("name")
@click.option("--store", metavar="URL", help=STORE_HELP)
def rm(name: str, store: str | None) -> None:
    """Remove NAME's token: it stops working at once."""
    from dsh_cli.hub.records import TOKEN_NOT_FOUND

    with _store(store) as hub_store:
        removed = hub_store.remove_token(name)
    if not removed:
        _fail(TOKEN_NOT_FOUND, f"{name[:64]!r} has no token; see `dsh hub token list`")
    click.echo(notice(f"removed the token of {name}"), err=True)
