"""``dsh sessions list | show ID | rm ID``: the stored sessions, for people and scripts."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from dsh_cli.cli.groups import CommandGroup
from dsh_cli.cli.options import JSON_HELP
from dsh_cli.core.clock import local_time
from dsh_cli.core.errors import format_line
from dsh_cli.core.lines import notice


def _open() -> Any:
    from dsh_cli.store import SessionStore

    return SessionStore.open()


def _fail(error: Any) -> None:
    """One stderr line naming the code, then exit 1."""
    click.echo(format_line(error.code, error.message), err=True)
    sys.exit(1)


def _with_store(action: Any) -> Any:
    """Run ``action(store)``; a store problem is one stderr line and exit 1."""
    from dsh_cli.store import StoreError

    try:
        with _open() as store:
            return action(store)
    except StoreError as error:
        _fail(error)


_PLURAL = {None: "sessions", "chat": "chats", "agent": "agent sessions"}


@click.group(cls=CommandGroup, invoke_without_command=True)
@click.pass_context
def sessions(ctx: click.Context) -> None:
    """List, show or remove stored sessions (alone: list them; resume one with `dsh -r ID`)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_sessions)


@sessions.command("list")
@click.option("--kind", type=click.Choice(["chat", "agent"]),
              help="Only chats (dsh's own model) or agents' `dsh mcp` sessions.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def list_sessions(kind: str | None, as_json: bool) -> None:
    """List stored sessions, most recently updated first."""
    summaries = _with_store(lambda store: store.list_sessions(kind))
    if as_json:
        click.echo(_json_text([s.to_json() for s in summaries]))
        return
    if not summaries:
        click.echo(notice(f"no stored {_PLURAL[kind]} yet"), err=True)
        return
    from dsh_cli.core.sanitize import sanitize_line

    rows = [("ID", "UPDATED", "KIND", "MODEL/AGENT", "TITLE")] + [
        (s.id, local_time(s.updated_at), s.kind, sanitize_line(s.shown_who),
         sanitize_line(s.shown_title))
        for s in summaries
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        click.echo("  ".join([*cells, row[4]]).rstrip())


@sessions.command("show")
@click.argument("session_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def show(session_id: str, as_json: bool) -> None:
    """Show one session's conversation (ID or a unique prefix of it)."""

    def load(store: Any) -> Any:
        record = store.load_session(session_id)
        return record, store.question_batches(record.id)

    record, batches = _with_store(load)
    if as_json:
        click.echo(_json_text(record.to_json()))
        return
    for line in transcript(record, batches):
        click.echo(line)


@sessions.command("rm")
@click.argument("session_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def rm(session_id: str, as_json: bool) -> None:
    """Remove a session with its messages and questions (ID or a unique prefix of it)."""
    session_id = _with_store(lambda store: store.delete_session(session_id))
    if as_json:
        click.echo(json.dumps({"id": session_id, "deleted": True}))
    else:
        click.echo(f"Deleted session {session_id}")


def transcript(record: Any, batches: list[Any]) -> list[str]:
    """A readable, sanitised transcript: header, then one block per message."""
    from dsh_cli.core.conversation import conversation_events
    from dsh_cli.core.events import AssistantMessage, ToolResultEvent, UserMessage
    from dsh_cli.core.sanitize import sanitize, sanitize_line

    lines = [
        f"session {record.id}  model {sanitize_line(record.model)}",
        f"created {local_time(record.created_at)}  updated {local_time(record.updated_at)}",
    ]
    if record.title:
        lines.append(f"title   {sanitize_line(record.title)}")

    def block(label: str, content: str) -> None:
        lines.extend(["", label])
        lines.extend(f"  {line}" for line in sanitize(content).splitlines())

    if record.system:
        block("system:", record.system)
    by_call = {batch.call_id: batch for batch in batches if batch.call_id}
    for event in conversation_events(record.messages):
        if isinstance(event, UserMessage):
            block("user:", event.content)
        elif isinstance(event, AssistantMessage):
            block("assistant:", event.content)
            for call in event.tool_calls:
                arguments = sanitize_line(call["arguments"])
                lines.append(f"  -> {sanitize_line(call['name'])} {arguments}")
                batch = by_call.get(call["id"])
                if batch is not None:
                    lines.append(f"     question {batch.rpc_id}: {batch.status}")
        elif isinstance(event, ToolResultEvent):
            block(f"tool result ({sanitize_line(event.name or event.call_id)}):", event.content)
    if record.pending_rpc_ids:
        lines.append("")
        lines.append(f"(a question is waiting: resume with `dsh run -r {record.id}`)")
    return lines


def _json_text(value: Any) -> str:
    """JSON of stored model and human text with every character that would not show as itself
    escaped (C1 controls, bidi overrides), on a terminal, into a pipe or a file alike."""
    from dsh_cli.core.sanitize import json_escaped

    return json_escaped(json.dumps(value, ensure_ascii=False))
