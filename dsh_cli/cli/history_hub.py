"""``dsh history --hub URL``: the hub's audit, read from its ``/history`` a page at a time.

The URL and the human token are read as every ``--hub`` reads them
(``core/hub_address.py``). Everything the hub sends is the agents' and the
humans' text: a table shows it sanitised, ``--json`` escapes what would not show as itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

import click

from dsh_cli.core.errors import CONFIG_ERROR, STORE_ERROR, ConfigError, UsageError
from dsh_cli.core.hub_address import hub_endpoint, hub_token

__all__ = ["hub_history", "parse_since", "parse_state"]

PAGE_BYTES = 64 * 1024 * 1024  # one /history page as read (500 steps of long labels fit)
REQUEST_SECONDS = 30.0
_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime | None = None) -> float:
    """``--since``: a span back from now (``90m``, ``2h``, ``7d``, ``1w``) or a local date or
    time (``2026-12-01``, ``2026-12-01 14:30``), as seconds since the epoch."""
    span = _SPAN.fullmatch(text.strip())
    if span:
        ago = timedelta(**{_UNITS[span[2]]: float(span[1])})
        return ((now or datetime.now().astimezone()) - ago).timestamp()
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--since {text[:64]!r}: give a span (90m, 2h, 7d, 1w) or a date "
                         "or time (2026-12-01, 2026-12-01 14:30)") from None
    return moment.timestamp()  # a naive time is local, as a human means it


def parse_state(text: str) -> str:
    """``--state``, one of the hub's entry states (read here: only ``--hub`` loads the hub)."""
    from dsh_cli.hub.records import ENTRY_STATES

    if text not in ENTRY_STATES:
        raise UsageError(f"--state {text[:64]!r}: one of {', '.join(ENTRY_STATES)}")
    return text


def hub_history(url: str, *, token_file: str | None, insecure_http: bool, query: dict[str, Any],
                limit: int | None, as_json: bool,
                environ: Mapping[str, str] = os.environ) -> int:
    """Show the hub's history as a table or JSON, page after page; how many steps."""
    from dsh_cli.core.sanitize import json_escaped

    base = _history_url(url, insecure_http)
    token = hub_token(token_file, whose="human", environ=environ)
    count = 0
    for item in _steps(base, token, query, limit):
        count += 1
        if as_json:
            text = json_escaped(json.dumps(item, ensure_ascii=False))
            click.echo(("[" if count == 1 else ", ") + text, nl=False)
        else:
            click.echo("\n".join(_lines(item)))
    if as_json:
        click.echo("]" if count else "[]")
    return count


def _history_url(url: str, insecure_http: bool) -> str:
    parsed = hub_endpoint(url, insecure_http=insecure_http, whose="human")
    return parsed.url.rstrip("/").removesuffix("/history") + "/history"


def _steps(url: str, token: str, query: dict[str, Any],
           limit: int | None) -> Iterator[dict[str, Any]]:
    """The steps the hub sends, page after page (one page in memory at a time)."""
    import httpx2

    from dsh_cli.hub.history import HISTORY_LIMIT

    left = limit
    after = 0
    with httpx2.Client(timeout=REQUEST_SECONDS, follow_redirects=False) as client:
        while True:
            page = min(left, HISTORY_LIMIT) if left is not None else HISTORY_LIMIT
            params = {**query, "after": after, "limit": page}
            body = _page(client, url, token, params)
            items = body.get("items")
            if not isinstance(items, list):
                raise ConfigError(f"{url}: the hub's answer is no history page")
            for item in items:
                if isinstance(item, dict):
                    yield item
            if left is not None:
                left -= len(items)
            after = body.get("next")  # type: ignore[assignment]
            if not isinstance(after, int) or not items or (left is not None and left <= 0):
                return


def _page(client: Any, url: str, token: str, params: dict[str, Any]) -> dict[str, Any]:
    """One page, read bounded; each failure one line naming the hub."""
    import httpx2

    from dsh_cli.core.sanitize import sanitize_line

    try:
        with client.stream("GET", url, params=params,
                           headers={"Authorization": f"Bearer {token}"}) as response:
            raw = bytearray()
            for chunk in response.iter_bytes():
                raw += chunk
                if len(raw) > PAGE_BYTES:
                    raise _HubFailed(STORE_ERROR, f"{url}: a page is over {PAGE_BYTES} bytes")
            status = response.status_code
    except httpx2.HTTPError as error:
        raise _HubFailed(STORE_ERROR, f"{url}: cannot read the hub: "
                         f"{sanitize_line(str(error)) or type(error).__name__}") from None
    said = sanitize_line(raw[:300].decode("utf-8", "replace").strip())  # the body's line
    if status == 401:
        raise _HubFailed(CONFIG_ERROR, f"{url}: the hub refused the token ({said})")
    if status != 200:
        raise _HubFailed(STORE_ERROR, f"{url}: the hub answered {status}: {said}")
    try:
        body = json.loads(raw)
    except ValueError:
        raise _HubFailed(STORE_ERROR, f"{url}: the hub's answer is not JSON") from None
    if not isinstance(body, dict):
        raise _HubFailed(STORE_ERROR, f"{url}: the hub's answer is no history page")
    return body


class _HubFailed(click.ClickException):
    """A failure reading the hub: its one ``dsh: CODE: message`` line, exit status 1."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def show(self, file: Any = None) -> None:
        from dsh_cli.core.errors import format_line

        click.echo(format_line(self.code, self.message), err=True)


def _lines(item: dict[str, Any]) -> list[str]:
    """One step as sanitised lines: when, what, who, the entry; what was asked or answered."""
    from dsh_cli.core.sanitize import one_line

    found = item.get("entry")
    entry: dict[str, Any] = found if isinstance(found, dict) else {}

    def said(value: Any, width: int = 200) -> str:
        return one_line(str(value if value is not None else "-"), width) or "-"

    at, when = item.get("at"), "?"
    if isinstance(at, (int, float)):
        try:
            when = datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S")
        except (ValueError, OverflowError, OSError):  # a time no calendar reaches
            pass
    asker = entry.get("agent") or entry.get("token")
    lines = [f"{when}  {said(item.get('action')):<7}  {said(item.get('actor'), 40):<12}  "
             f"{said(entry.get('id'))[:8]}  {said(asker, 40)}@{said(entry.get('machine'), 40)}"
             f"  {said(entry.get('team'), 40)}  {said(entry.get('state'))}  "
             f"via {said(item.get('replica'), 60)}"]
    if item.get("action") == "ask":
        lines.append(f"    token {said(entry.get('token'), 64)}  cwd {said(entry.get('cwd'))}")
        lines.append(f"    ? {said(entry.get('asked'), 300)}")
    elif item.get("action") == "answer" and entry.get("answer") is not None:
        lines.append(f"    = {said(entry.get('answer'), 300)}")
    return lines
