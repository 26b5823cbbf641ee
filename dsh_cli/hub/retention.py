"""Retention: a serving hub forgets settled entries and their audit once they are old enough.

``dsh hub serve --retention DAYS`` (else ``[hub] retention_days``, else 90 days) runs
``keep_pruning`` beside its routes: every ``PRUNE_SECONDS`` it calls ``HubStore.prune`` off
the event loop, a page (one short transaction) at a time until nothing older is left, so
neither the loop nor the store's writers wait on one long delete. A pending entry and its
audit are kept however old. 0 days keeps everything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from dsh_cli.hub.records import HubStoreError

if TYPE_CHECKING:
    from dsh_cli.hub.store import HubStore

__all__ = ["DAY", "DEFAULT_RETENTION_DAYS", "PRUNE_PAGE", "PRUNE_SECONDS", "keep_pruning",
           "prune_once"]

DEFAULT_RETENTION_DAYS = 90.0  # settled entries and their audit are kept this long
DAY = 86_400.0
PRUNE_SECONDS = 15 * 60.0  # how often a hub process looks for what retention lets go
PRUNE_PAGE = 1000  # rows one transaction forgets at most, of entries and of audit rows


async def prune_once(store: HubStore, days: float, *,
                     page: int = PRUNE_PAGE) -> tuple[int, int]:
    """Forget everything older than ``days`` that retention lets go, a page at a time;
    how many entries and audit rows were forgotten."""
    entries = audit = 0
    while True:
        gone, steps = await asyncio.to_thread(store.prune, days * DAY, page)
        entries, audit = entries + gone, audit + steps
        if gone < page and steps < page:
            return entries, audit


async def keep_pruning(store: HubStore, days: float, *, every: float = PRUNE_SECONDS,
                       page: int = PRUNE_PAGE, report: Callable[[str], None] = lambda line: None,
                       pruned: Callable[[int, int], None] | None = None) -> None:
    """Prune now and every ``every`` seconds until cancelled; a store error is reported in
    one line and tried again next time (PostgreSQL may be restarting). ``pruned`` hears the
    counts of each pass."""
    if days <= 0:
        return
    while True:
        try:
            entries, audit = await prune_once(store, days, page=page)
        except HubStoreError as error:
            report(f"{error.code}: retention: {error.message}")
        else:
            if entries or audit:
                report(f"retention: forgot {entries} settled entries and {audit} audit rows "
                       f"older than {days:g} days")
            if pruned is not None:
                pruned(entries, audit)
        await asyncio.sleep(every)
