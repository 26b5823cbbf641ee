"""What the tickets and the tasks keep alike: counts by owner, open work ended at exit, and
the two stores asked as one of an owner (``LaterWork``: a session's end closes both).

``OwnerCounts`` is how a store answers "how many of this owner's …" and "does this owner
hold any …" without a scan (the HTTP door asks ``holds`` of every session at an admission);
an owner with none has no key, so the counts are as many as the owners that hold work.
``end_with_grace`` ends work that was asked to end (its batch aborted): it gets
``OWNED_CLOSE_GRACE_SECONDS`` to settle itself, recorded, and what has not is cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any, Protocol

from dsh_cli.core.limits import OWNED_CLOSE_GRACE_SECONDS

__all__ = ["LaterWork", "OwnedStore", "OwnerCounts", "end_with_grace"]


class OwnedStore(Protocol):
    """A store of work fetched later, by owner (``tickets.py``, ``tasks/store.py``)."""

    def holds(self, owner: str) -> bool:
        """Whether ``owner`` has work open, or an outcome it has not been handed."""
        ...

    async def close_owner(self, owner: str) -> None:
        """``owner`` went away: its open work is withdrawn and ended, all of it forgotten."""
        ...


class LaterWork:
    """Every store of one ``dsh mcp``'s work fetched later, asked as one of an owner."""

    def __init__(self, *stores: OwnedStore) -> None:
        self.stores = stores

    def holds(self, owner: str) -> bool:
        return any(store.holds(owner) for store in self.stores)

    async def close_owner(self, owner: str) -> None:
        """The stores end ``owner``'s work together, so within one grace, not one each."""
        await asyncio.gather(*(store.close_owner(owner) for store in self.stores))


class OwnerCounts:
    """A count per owner; an owner whose count is 0 has no key (the dict stays small)."""

    def __init__(self) -> None:
        self._of: dict[str, int] = {}

    def __contains__(self, owner: object) -> bool:
        return owner in self._of

    def __getitem__(self, owner: str) -> int:
        return self._of.get(owner, 0)

    def up(self, owner: str) -> None:
        self._of[owner] = self._of.get(owner, 0) + 1

    def down(self, owner: str) -> None:
        left = self._of.get(owner, 0) - 1
        if left > 0:
            self._of[owner] = left
        else:
            self._of.pop(owner, None)


async def end_with_grace(running: Collection[asyncio.Future[Any]],
                         grace: float = OWNED_CLOSE_GRACE_SECONDS) -> None:
    """Wait for ``running`` (already asked to end) ``grace`` seconds; cancel what has not
    ended by then, and wait for that too, so nothing is left running unowned."""
    if not running:
        return
    _, stuck = await asyncio.wait(running, timeout=grace)
    for task in stuck:
        task.cancel()
    if stuck:
        await asyncio.wait(stuck)
