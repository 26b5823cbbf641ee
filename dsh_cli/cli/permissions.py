"""``dsh permissions list | rm ID | rm --all``: every remembered "always" and trusted project.

Two files of the config directory hold what the human granted for good: saved approvals
(``permissions.json``) and trusted project files (``trusted-projects.json``). This lists
both with what each covers and since when, and removes them by the id it shows.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from dsh_cli.cli.groups import CommandGroup
from dsh_cli.cli.options import JSON_HELP
from dsh_cli.core.clock import local_time
from dsh_cli.core.errors import GRANT_NOT_FOUND, USAGE, format_line
from dsh_cli.core.lines import notice

if TYPE_CHECKING:
    from dsh_cli.mcp_client.config.trust import ProjectTrust
    from dsh_cli.permissions.approvals import Approvals, Grant

class Entry(NamedTuple):
    """One remembered grant as listed: a saved approval or a trusted project."""

    id: str
    kind: str  # "always" or "project"
    covers: str  # what it allows, in words (sanitised)
    scope: str
    at: str
    name: str
    detail: dict[str, Any]


def _files() -> tuple[Approvals, ProjectTrust]:
    from dsh_cli.core.home import approvals_file, config_dir
    from dsh_cli.mcp_client.config.trust import FILE_NAME as TRUST_FILE
    from dsh_cli.mcp_client.config.trust import ProjectTrust
    from dsh_cli.permissions.approvals import Approvals

    return Approvals(approvals_file()), ProjectTrust(config_dir() / TRUST_FILE)


def _covers(grant: Grant) -> str:
    from dsh_cli.core.sanitize import one_line, sanitize_line

    tool = sanitize_line(grant.tool)
    if grant.scope == "input":
        agent = sanitize_line(grant.agent or "an agent")
        where = sanitize_line(_home_relative(grant.cwd or "?"))
        shown = one_line(grant.input or "", 80)
        return f"{agent}'s {tool} with input {shown} in {where}"
    if grant.scope == "legacy":
        return f"{tool} for any input (saved by an older dsh; no longer applied)"
    server = f" of server {sanitize_line(grant.server)}" if grant.server else ""
    return f"{tool}{server} (this tool definition)"


def _home_relative(path: str) -> str:
    import os

    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def entries() -> list[Entry]:
    """Saved approvals, then trusted projects, each oldest first."""
    from dsh_cli.mcp_client.config.trust import FILE_NAME as TRUST_FILE
    from dsh_cli.permissions.approvals import grant_id

    approvals, trust = _files()
    found = [Entry(grant.id, "always", _covers(grant), grant.scope, grant.at, grant.name,
                   {key: value for key, value in grant._asdict().items()
                    if key not in ("id", "name", "scope", "at") and value is not None})
             for grant in approvals.grants()]
    projects = sorted(trust.entries().items(), key=lambda item: str(item[1].get("at", "")))
    for path, entry in projects:
        from dsh_cli.core.sanitize import sanitize_line  # loaded only when there is a name

        found.append(Entry(grant_id(TRUST_FILE, path), "project",
                           f"{sanitize_line(_home_relative(path))}/.mcp.json "
                           "(this file's content)", "file", str(entry.get("at", "")), path,
                           {"path": path}))
    return found


def _fail(code: str, message: str) -> None:
    click.echo(format_line(code, message), err=True)
    sys.exit(1)


@contextlib.contextmanager
def _files_refused() -> Iterator[None]:
    """A grants file that cannot be trusted is one line; nothing is written over it."""
    from dsh_cli.core.errors import PrivateFileError

    try:
        yield
    except PrivateFileError as error:
        _fail(error.code, error.message)


@click.group(cls=CommandGroup, invoke_without_command=True)
@click.pass_context
def permissions(ctx: click.Context) -> None:
    """List or undo remembered "always" grants and trusted projects (alone: list them)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_grants)


@permissions.command("list")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def list_grants(as_json: bool) -> None:
    """List every remembered grant: its id, since when, and what it allows."""
    with _files_refused():
        found = entries()
    if as_json:
        click.echo(json.dumps([{"id": e.id, "kind": e.kind, "scope": e.scope, "at": e.at,
                                "covers": e.covers, **e.detail} for e in found],
                              ensure_ascii=sys.stdout.isatty()))
        return
    if not found:
        click.echo(notice("nothing remembered: no \"always\" grants, no trusted projects"),
                   err=True)
        return
    click.echo("ID        SINCE             GRANT")
    for entry in found:
        what = "always" if entry.kind == "always" else "trusted project"
        click.echo(f"{entry.id}  {local_time(entry.at):<16}  {what}: {entry.covers}")
    click.echo("undo one with `dsh permissions rm ID`, all with `dsh permissions rm --all`")


@permissions.command("rm")
@click.argument("grant", metavar="ID", required=False)
@click.option("--all", "everything", is_flag=True, help="Remove every remembered grant.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def rm(grant: str | None, everything: bool, as_json: bool) -> None:
    """Undo one remembered grant (its ID from `dsh permissions list`), or --all of them."""
    if everything == (grant is not None):
        _fail(USAGE, "give one ID from `dsh permissions list`, or --all")
    with _files_refused():
        _remove(grant, everything, as_json)


def _remove(grant: str | None, everything: bool, as_json: bool) -> None:
    found = entries()
    prefix = (grant or "").strip().lower()
    chosen = found if everything else [e for e in found
                                       if len(prefix) >= 4 and e.id.startswith(prefix)]
    if not everything and len(chosen) != 1:
        how = "is ambiguous" if chosen else "names no remembered grant"
        _fail(GRANT_NOT_FOUND, f"{grant} {how}; see `dsh permissions list`")
    approvals, trust = _files()
    approvals.forget({e.name for e in chosen if e.kind == "always"})
    trust.forget({e.name for e in chosen if e.kind == "project"})
    if as_json:
        click.echo(json.dumps({"removed": [e.id for e in chosen]}))
        return
    for entry in chosen:
        what = "always" if entry.kind == "always" else "trusted project"
        click.echo(f"removed {entry.id}: {what}: {entry.covers}")
    if not chosen:
        click.echo(notice("nothing remembered to remove"), err=True)
