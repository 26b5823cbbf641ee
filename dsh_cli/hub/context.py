"""What every part of a serving hub shares: its store, its ear on it, its routes, who asks.

``HubContext`` is handed to each group of routes (agents' ``/mcp``, humans' ``/desk``,
``/history``); ``holder`` reads a request's ``Authorization: Bearer`` token once, at the
edge, into the ``Token`` it belongs to (or None), off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dsh_cli.hub.records import HubStoreError, Token
from dsh_cli.hub.routes import Routes
from dsh_cli.hub.store import HubStore
from dsh_cli.hub.watch import HubWatch

__all__ = ["LEASE_SECONDS", "HubContext", "bearer", "holder"]

LEASE_SECONDS = 30.0  # a desk's claim on an entry lasts this long unless renewed


@dataclass
class HubContext:
    """One serving hub process: its store, its watch, its routes, how long a claim lasts,
    its log."""

    store: HubStore
    watch: HubWatch
    lease: float = LEASE_SECONDS
    routes: Routes = field(default_factory=Routes)  # which team each ask goes to
    report: Callable[[str], None] = field(default=lambda line: None)
    # what each group of routes ends when the process stops (its endless streams), so the
    # server's connections close at once rather than being cut at its grace's end
    stopping: list[Callable[[], None]] = field(default_factory=list)

    def stop_streams(self) -> None:
        """The process is stopping: every group's endless streams end now."""
        for end in self.stopping:
            end()


def bearer(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer …`` header (scheme in any case), else None."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    credentials = credentials.strip()
    return credentials if scheme.lower() == "bearer" and credentials else None


async def holder(hub: HubContext, headers: Mapping[str, str]) -> Token | None:
    """Whose token a request carries (checked against the store's digests), else None."""
    import asyncio

    secret = bearer(headers)
    if secret is None:
        return None
    try:
        return await asyncio.to_thread(hub.store.authenticate, secret)
    except HubStoreError as error:
        hub.report(f"{error.code}: {error.message}")
        return None
