"""What the tickets and the tasks keep alike: counts by owner, open work ended at exit, and
the two stores asked as one of an owner (``LaterWork``: a session's end closes both).

``OwnedRecords`` keeps records by id and by owner, so an owner's (its session ended, a
listing) are found without a scan of everyone's. ``OwnerCounts`` is how a store answers
"how many of this owner's …" and "does this owner hold any …" without a scan (the HTTP door
asks ``holds`` of every session at an admission); an owner with none has no key, so the
counts are as many as the owners that hold work. ``end_with_grace`` ends work that was
asked to end (its batch aborted): it gets ``OWNED_CLOSE_GRACE_SECONDS`` to settle itself,
recorded, and what has not is cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterator
from typing import Any, Generic, Protocol, TypeVar

from dsh_cli.core.limits import OWNED_CLOSE_GRACE_SECONDS

__all__ = ["LaterWork", "OwnedRecords", "OwnedStore", "OwnerCounts", "end_with_grace"]

Record = TypeVar("Record")


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


class OwnedRecords(Generic[Record]):
    """Records by id, and by owner, each the oldest first; an owner with none has no key."""

    def __init__(self) -> None:
        self._by_id: dict[str, Record] = {}
        self._of: dict[str, dict[str, Record]] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._by_id

    def __iter__(self) -> Iterator[Record]:
        return iter(list(self._by_id.values()))

    def get(self, record_id: str) -> Record | None:
        return self._by_id.get(record_id)

    def add(self, owner: str, record_id: str, record: Record) -> None:
        self._by_id[record_id] = record
        self._of.setdefault(owner, {})[record_id] = record

    def remove(self, owner: str, record_id: str) -> None:
        self._by_id.pop(record_id, None)
        mine = self._of.get(owner)
        if mine is not None:
            mine.pop(record_id, None)
            if not mine:
                del self._of[owner]

    def of(self, owner: str) -> list[Record]:
        """``owner``'s records, the oldest first."""
        return list(self._of.get(owner, {}).values())


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
