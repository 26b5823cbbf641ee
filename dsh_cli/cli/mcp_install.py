"""``dsh mcp install AGENT``: add this dsh to an agent's own configuration, in one command.

Every file is read and checked before any is written, so a file that cannot be parsed is
refused (one ``dsh: CONFIG_ERROR`` line, exit 2) and nothing changes anywhere. Each
change is a key of ours merged into the user's file; a second run changes nothing.
``--print`` shows the keys instead of writing them. In project scope the files name
``dsh`` when the ``dsh`` on PATH is this one (a teammate's PATH finds theirs), else this
machine's path, said in a line. An agent with a question tool of its own is offered the
line for its instructions file that has its model ask through dsh (asked on a terminal,
never written twice); the last line is a command that makes the agent ask at the desk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from dsh_cli.core.lines import notice

__all__ = ["install"]

AGENT_NAMES = ("claude", "codex", "gemini", "opencode", "cursor", "vscode")


@click.command("install")
@click.argument("agent", type=click.Choice(AGENT_NAMES))
@click.option("--scope", type=click.Choice(("user", "project")), default="user",
              show_default=True,
              help="user: every project (files under HOME); project: this directory's files.")
@click.option("--print", "show", is_flag=True, help="Show what would be written; write nothing.")
@click.option("--instructions/--no-instructions", "instructions", default=None,
              help="Add (or not) the line that has the agent ask through dsh to its "
                   "instructions file (CLAUDE.md, AGENTS.md, GEMINI.md); default: ask on a "
                   "terminal, else show the line.")
@click.option("--hub", "hub", metavar="URL",
              help="Have the agent start `dsh mcp --hub URL`, forwarding to a dsh hub.")
@click.option("--hub-token-file", "hub_token_file", metavar="PATH",
              help="With --hub: the forwarder reads the agent token from PATH (else "
                   "DSH_HUB_TOKEN in the agent's environment).")
@click.option("--insecure-http", is_flag=True,
              help="With --hub: allow plain http to another machine.")
def install(agent: str, scope: str, show: bool, instructions: bool | None, hub: str | None,
            hub_token_file: str | None, insecure_http: bool) -> None:
    """Add dsh mcp to AGENT's config: its absolute path, timeouts, the tool's permission."""
    import shlex
    import shutil

    from dsh_cli.core.errors import HarnessError, report

    try:
        mcp_args = _hub_args(hub, hub_token_file, insecure_http)
    except HarnessError as error:
        report(error, sys.stderr)
        sys.exit(2)
    from dsh_cli.mcp_server.install.agents import (
        AGENTS,
        NOTES,
        PROGRAMS,
        dsh_command,
        edits_for,
        on_path,
    )
    from dsh_cli.mcp_server.install.documents import Document
    from dsh_cli.mcp_server.install.instructions import try_it

    project = Path.cwd()
    command = dsh_command()
    # a project's files are shared: `dsh` runs each teammate's own, where PATH finds it
    portable = scope == "project" and on_path(command)
    if portable:
        command = ["dsh"]
    edits = edits_for(agent, scope,  # type: ignore[arg-type]
                      home=Path.home(), project=project, command=command, mcp_args=mcp_args)
    # a project's file may link only to another file of the project: its content is
    # written back into the project, where the project's own agents read it
    within = project if scope == "project" else None
    documents = [Document(edit.path, edit.format, within=within) for edit in edits]
    try:
        for document, edit in zip(documents, edits, strict=True):
            document.read().apply(edit.settings)
        for document in documents:
            document.render()  # every file's new text made before the first is written
    except HarnessError as error:
        report(error, sys.stderr)
        sys.exit(2)
    name = AGENTS[agent][0]
    if show:
        for edit in edits:
            click.echo(f"# {edit.path}")
            click.echo(_fragment(edit).rstrip("\n"))
        return
    for document, edit in zip(documents, edits, strict=True):
        try:
            wrote = document.write()
        except HarnessError as error:
            report(error, sys.stderr)
            sys.exit(2)
        where = (f"{edit.path} (through the link to {document.target})"
                 if document.target != edit.path and wrote else f"{edit.path}")
        if wrote:
            click.echo(notice(f"wrote {where}: {_keys(document.changed)}"))
        else:
            click.echo(notice(f"{edit.path} already has dsh; unchanged"))
        for setting, theirs in document.kept:
            click.echo(notice(f"kept your {_dotted(setting.keys)} = {_json(theirs)} in "
                              f"{edit.path} (dsh's is {_json(setting.value)}; delete yours and "
                              "run again to take it)"))
    if hub is None:
        click.echo(notice(f"{name} now starts `dsh mcp`; answer its questions at `dsh attach`"))
    else:
        click.echo(notice(f"{name} now starts `dsh mcp {shlex.join(mcp_args)}`, which forwards "
                          "its questions to the hub"))
        if hub_token_file is None:
            click.echo(notice(f"note: the forwarder takes the agent token from DSH_HUB_TOKEN "
                              f"in {name}'s environment (`dsh hub token add NAME --agent` "
                              "makes one)"))
    if (agent, scope) in NOTES:
        click.echo(notice(f"note: {NOTES[agent, scope]}"))
    if scope == "project" and not portable:
        click.echo(notice(f"note: the files name {shlex.join(command)}, this machine's path "
                          "(no `dsh` on PATH is this one): a teammate needs dsh there, or "
                          "dsh on PATH and `dsh` written in its place"))
    installed = shutil.which(PROGRAMS[agent]) is not None
    if not installed:
        click.echo(notice(f"note: {name} is not installed here (no `{PROGRAMS[agent]}` on "
                          "PATH); its config is ready for when it is"))
    steps = [f"in {edit.path} {_undo(edit.settings)}" for edit in edits]
    added = _offer_instructions(agent, scope, project, instructions, name)
    if added is not None:
        steps.append(f"in {added} delete the line about the dsh MCP server")
    click.echo("to undo: " + "; ".join(steps))
    trial = try_it(agent)
    if trial is not None and installed:
        click.echo(f"try it, with `dsh attach` open in another terminal: {shlex.join(trial)}")


def _hub_args(url: str | None, token_file: str | None, insecure_http: bool) -> tuple[str, ...]:
    """``--hub URL`` and its options as the agent's server gets them, checked now; no token
    is ever written into an agent's file."""
    from dsh_cli.core.errors import UsageError

    if url is None:
        if token_file is not None or insecure_http:
            raise UsageError("--hub-token-file and --insecure-http go with --hub URL")
        return ()
    import os

    from dsh_cli.mcp_server.hub_target import check_token_file, hub_url

    args: tuple[str, ...] = ("--hub", hub_url(url, insecure_http=insecure_http))
    if token_file is not None:
        check_token_file(token_file)
        args += ("--hub-token-file", os.path.abspath(token_file))
    return (*args, "--insecure-http") if insecure_http else args


def _offer_instructions(agent: str, scope: str, project: Path, choice: bool | None,
                        name: str) -> Path | None:
    """The line for the agent's instructions file, added if the user says so; its path if
    written. A file that already has it is left alone, and nobody is asked."""
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.mcp_server.install.documents import Document, Setting
    from dsh_cli.mcp_server.install.instructions import MARKER, instructions_for

    found = instructions_for(agent, scope, home=Path.home(), project=project)
    if found is None or choice is False:
        return None
    path, wanted = found
    document = Document(path, "text", within=project if scope == "project" else None)
    try:
        document.read().apply((Setting((MARKER,), wanted.line(), "add"),))
    except HarnessError as error:
        report(error, sys.stderr)  # the agent's config stays written: one line, no more
        return None
    if not document.changed:
        click.echo(notice(f"{path} already has {name} ask through dsh"))
        return None
    if choice is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):  # nobody to see the question
            click.echo(notice(f"to have {name} ask through dsh rather than its own "
                              f"{wanted.own_tool}, add this line to {path} (or run again with "
                              f"--instructions): {wanted.line()}"))
            return None
        click.echo(notice(f"{name} has a question tool of its own ({wanted.own_tool}); this "
                          f"line in {path} has it ask through dsh instead:"))
        click.echo(f"  {wanted.line()}")
        try:
            choice = click.confirm("add it?", default=False)
        except click.Abort:  # ctrl-d or ctrl-c at the question: a no
            click.echo()
            choice = False
        if not choice:
            return None
    try:
        document.render()
        document.write()
    except HarnessError as error:
        report(error, sys.stderr)
        return None
    click.echo(notice(f"wrote {path}: {name} asks through dsh"))
    return path


def _dotted(keys: tuple[str, ...]) -> str:
    from dsh_cli.mcp_server.install.documents import dotted

    return dotted(keys)


def _json(value: Any) -> str:
    """A value as one line of JSON, whatever a config file held (a TOML date, a surrogate)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _keys(settings: Any) -> str:
    from dsh_cli.mcp_server.install.documents import dotted

    return ", ".join(f"{dotted(s.keys)} += {json.dumps(s.value)}" if s.how == "add"
                     else f"{dotted(s.keys)} = {json.dumps(s.value)}" for s in settings)


def _undo(settings: Any) -> str:
    """Delete the server's table; take our item out of a list; drop a default we set."""
    from dsh_cli.mcp_server.install.documents import dotted

    steps: list[str] = []
    for setting in settings:
        if setting.how == "add":
            step = f"remove {json.dumps(setting.value)} from {dotted(setting.keys)}"
        elif "dsh" in setting.keys:
            step = f"delete {dotted(setting.keys[:setting.keys.index('dsh') + 1])}"
        elif setting.how == "default":
            step = f"delete {dotted(setting.keys)} unless you set it yourself"
        else:
            step = f"delete {dotted(setting.keys)}"
        if step not in steps:
            steps.append(step)
    return ", ".join(steps)


def _fragment(edit: Any) -> str:
    """The keys of ``edit`` alone, as a document in the file's own format."""
    from dsh_cli.mcp_server.install.documents import Document

    fragment = Document(edit.path, edit.format)
    fragment.apply(edit.settings)
    return fragment.text()
