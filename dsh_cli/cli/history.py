"""``dsh history``: past question batches of every session, who answered them and when."""

from __future__ import annotations

import json
import sys
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
              help="Only sessions whose agent contains NAME (a model, or mcp:<client>); with "
                   "--hub, only entries of the agent whose token or own name is NAME.")
@click.option("--grep", "text", metavar="TEXT",
              help="Only batches whose questions or answer contain TEXT (any case).")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N",
              help="Only the newest N batches (with --hub: the first N steps).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--hub", "hub_url", metavar="URL",
              help="The audit of the team's hub at URL instead: every ask, claim, answer, "
                   "cancel and timeout you may see, oldest first (human token from "
                   "DSH_HUB_TOKEN or --hub-token-file).")
@click.option("--hub-token-file", metavar="PATH",
              help="With --hub: read the human token from PATH (never give it on the "
                   "command line).")
@click.option("--insecure-http", is_flag=True,
              help="With --hub: allow plain http to another machine (a proxy encrypts it).")
@click.option("--since", metavar="WHEN",
              help="With --hub: only steps since WHEN (90m, 2h, 7d, or 2026-12-01 14:30).")
@click.option("--human", metavar="NAME", help="With --hub: only steps NAME took.")
@click.option("--state", metavar="STATE",
              help="With --hub: only entries now in STATE (pending, answered, cancelled or "
                   "timeout).")
def history(session: str | None, agent: str | None, text: str | None, limit: int | None,
            as_json: bool, hub_url: str | None, hub_token_file: str | None,
            insecure_http: bool, since: str | None, human: str | None,
            state: str | None) -> None:
    """List past questions and their answers, oldest first, with who answered and when."""
    if hub_url is not None:
        _hub(hub_url, session=session, text=text, agent=agent, limit=limit, as_json=as_json,
             token_file=hub_token_file, insecure_http=insecure_http, since=since,
             human=human, state=state)
        return
    for name, value in (("--hub-token-file", hub_token_file), ("--since", since),
                        ("--human", human), ("--state", state),
                        ("--insecure-http", insecure_http or None)):
        if value is not None:
            raise click.UsageError(f"{name} goes with --hub URL")

    def show(store: Any) -> int:
        if session:
            _known(store, session)
        return _show(store.question_history(session=session, agent=agent, text=text,
                                            limit=limit), as_json=as_json)

    shown = _with_store(show)
    if not shown and not as_json:
        click.echo(notice("no questions match" if session or agent or text
                          else "no questions asked yet"), err=True)


def _hub(url: str, *, session: str | None, text: str | None, agent: str | None,
         limit: int | None, as_json: bool, token_file: str | None, insecure_http: bool,
         since: str | None, human: str | None, state: str | None) -> None:
    """``dsh history --hub URL``: the hub's audit; its failures one line each."""
    from dsh_cli.cli.history_hub import hub_history, parse_since, parse_state
    from dsh_cli.core.errors import HarnessError, UsageError, report

    try:
        if session is not None or text is not None:
            raise UsageError(f"{'--session' if session is not None else '--grep'} reads this "
                             "machine's sessions, not a hub's history")
        query = {key: value for key, value in (
            ("since", parse_since(since) if since is not None else None), ("agent", agent),
            ("human", human), ("state", parse_state(state) if state is not None else None))
            if value is not None}
        shown = hub_history(url, token_file=token_file, insecure_http=insecure_http,
                            query=query, limit=limit, as_json=as_json)
    except HarnessError as error:
        report(error, sys.stderr)
        sys.exit(2 if isinstance(error, UsageError) else 1)
    if not shown and not as_json:
        click.echo(notice("no steps match" if query else "nothing asked at the hub yet"),
                   err=True)


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
