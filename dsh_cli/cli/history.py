"""``dsh history``: past question batches of every session, who answered them and when."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import click

from dsh_cli.cli.options import JSON_HELP
from dsh_cli.cli.sessions import _with_store
from dsh_cli.core.clock import local_time
from dsh_cli.core.lines import notice


@click.command()
@click.option("--session", "session", metavar="ID", help="Only this session (ID or a prefix).")
@click.option("--agent", metavar="NAME",
              help="Only sessions whose agent contains NAME (a model, or mcp:<client>).")
@click.option("--grep", "text", metavar="TEXT",
              help="Only batches whose questions or answer contain TEXT (any case).")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N",
              help="Only the newest N batches.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def history(session: str | None, agent: str | None, text: str | None, limit: int | None,
            as_json: bool) -> None:
    """List past questions and their answers, oldest first, with who answered and when."""
    def show(store: Any) -> int:
        if session:
            _known(store, session)
        return _show(store.question_history(session=session, agent=agent, text=text,
                                            limit=limit), as_json=as_json)

    shown = _with_store(show)
    if not shown and not as_json:
        click.echo(notice("no questions match" if session or agent or text
                          else "no questions asked yet"), err=True)


def _show(found: Iterator[Any], *, as_json: bool) -> int:
    """Write the batches as they are read (one in memory at a time); how many there were.

    Stored text is the agents' and the humans': in JSON every character that would not show
    as itself is escaped (``json_escaped``), on a terminal, into a pipe or a file alike."""
    from dsh_cli.core.sanitize import json_escaped

    count = 0
    for count, item in enumerate(found, start=1):
        if as_json:
            text = json_escaped(json.dumps(item.to_json(), ensure_ascii=False))
            click.echo(("[" if count == 1 else ", ") + text, nl=False)
        else:
            click.echo(("" if count == 1 else "\n") + "\n".join(_block(item)))
    if as_json:
        click.echo("]" if count else "[]")
    return count


def _known(store: Any, session: str) -> None:
    """``SessionNotFound`` when no stored session is, or starts with, ``session``; a prefix
    several share is fine (the batches of all of them are listed)."""
    from dsh_cli.store import SessionNotFound

    try:
        store.resolve_id(session)
    except SessionNotFound as error:
        if not error.matches:
            raise


def _block(item: Any) -> list[str]:
    """One batch as sanitised lines: a header, then each question with its answer."""
    from dsh_cli.core.sanitize import sanitize_line

    when = local_time(item.resolved_at or item.created_at)
    by = f" by {sanitize_line(item.answered_by)}" if item.answered_by else ""
    lines = [f"{when}  {item.session_id[:8]}  {sanitize_line(item.agent)}  "
             f"{ended(item)}{by}"]
    answers = {entry.get("id"): entry for entry in (item.answer or {}).get("answers", [])
               if isinstance(entry, dict)}
    for question in item.request.get("questions", []):
        lines.append(f"  ? {sanitize_line(str(question.get('question', '')))}")
        entry = answers.get(question.get("id"))
        if entry is not None:
            lines.append(f"    = {sanitize_line(_answer_text(entry))}")
    return lines


def ended(item: Any) -> str:
    """How a batch ended, in its ``Outcome``'s words; ``pending`` or ``interrupted`` while
    it is open."""
    outcome = item.outcome
    return str(item.status) if outcome is None else outcome.said(by_agent=item.by_agent)


def _answer_text(entry: dict[str, Any]) -> str:
    """The chosen labels, the typed text and the note of one answer, or ``(skipped)``."""
    parts = [str(label) for label in entry.get("selected", [])]
    if entry.get("custom") is not None:
        parts.append(f"\"{entry['custom']}\"")
    text = ", ".join(parts) or "(skipped)"
    if entry.get("note"):
        text += f"  (note: {entry['note']})"
    return text
