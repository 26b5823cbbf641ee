"""The one store of work a request leaves to fetch later: tickets and MCP tasks alike.

A ``Later`` is one piece of such work, whatever fetches it: its id, its owner
(``owners.py``), its ``kind``, the future of its outcome (set once: first wins), the work
that runs to settle it, its abort signal, and its times (made, settled, first fetched, its
time to live). ``LaterWork`` keeps every record of one ``dsh mcp`` by id and by owner, and
what is common to all of them: the counts by owner (open, kept, not yet fetched: the HTTP
door asks ``holds`` of every session at an admission, so each answer is a count, never a
scan), the first fetch, forgetting, and the end of an owner's work (its session ended) or
of all of it (the server stopping): each live record withdrawn, the newest first (a task
before the ticket of the batch it waits on), its work given ``OWNED_CLOSE_GRACE_SECONDS``
to settle itself, recorded, then cancelled.

What differs is each record's ``view`` (``LaterView``): the rules of the kind of work that
made it, and its wire: ``tickets.py`` (an outcome kept until fetched or its time, swept at
each use; fetched by ``get_user_answer``) and ``tasks/store.py`` (a task kept its TTL, on a
timer; fetched by ``tasks/*`` in both eras). Each view's caps (``core/limits.py``) read
the counts the store keeps for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from dsh_cli.core.limits import OWNED_CLOSE_GRACE_SECONDS
from dsh_cli.core.signal import AbortSignal

__all__ = ["Later", "LaterView", "LaterWork", "OwnedRecords", "OwnerCounts", "Tally",
           "end_with_grace"]

Record = TypeVar("Record")


class LaterView(Protocol):
    """The rules of one kind of work fetched later (``tickets.py``, ``tasks/store.py``)."""

    def withdraw(self, record: Later, *, stopping: bool) -> None:
        """Ask ``record``'s live work to end: its owner went away (``stopping``: the server)."""
        ...


@dataclass(eq=False, slots=True)
class Later:
    """One piece of work fetched later: open until ``outcome`` is set, then kept its time."""

    id: str
    owner: str
    kind: str  # what made it: "ask" (an async ask_user_question batch), "task" (an MCP task)
    view: LaterView  # whose rules it follows, and who fetches it
    outcome: asyncio.Future[Any]  # set once, with what the work ended with
    created: float  # by the store's clock (expiry counts from it)
    ttl: float | None = None  # seconds from ``created`` after which it goes, whatever its state
    signal: AbortSignal | None = None  # aborts the work (None: it is cancelled instead)
    work: asyncio.Future[Any] | None = None  # what runs to set ``outcome`` (None: ``outcome``)
    made: float = field(default_factory=time.time)  # by the wall clock, as a wire writes it
    settled: float | None = None  # by the store's clock
    fetched: float | None = None  # the first time its outcome was handed out
    timer: asyncio.TimerHandle | None = None  # its expiry, for a view that keeps a timer
    watcher: Callable[[Later], Awaitable[None]] | None = None  # told of each change

    @property
    def done(self) -> bool:
        return self.outcome.done()

    @property
    def running(self) -> asyncio.Future[Any]:
        """What runs until the work has ended (at an exit it gets the grace)."""
        return self.work if self.work is not None else self.outcome

    async def ended(self) -> None:
        """Wait for the outcome; a cancelled wait leaves the work alone."""
        await asyncio.wait({self.outcome})

    def abort(self, reason: str) -> bool:
        """Ask the work to end; False when its outcome came first (its signal sealed)."""
        if self.signal is not None:
            return self.signal.abort(reason)
        self.running.cancel()
        return True


class Tally:
    """One view's counts: open in all and by owner, settled ones kept by owner."""

    def __init__(self) -> None:
        self.open = 0
        self.open_of = OwnerCounts()
        self.kept_of = OwnerCounts()
        self.kept: dict[str, Later] = {}  # settled records, the first settled first

    def held(self, owner: str) -> int:
        return self.open_of[owner] + self.kept_of[owner]


class LaterWork:
    """Every record of work fetched later of one ``dsh mcp`` process, all owners together."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._records: OwnedRecords[Later] = OwnedRecords()
        self._unfetched = OwnerCounts()  # owner -> its records whose outcome it was not handed
        self._tallies: dict[LaterView, Tally] = {}  # each view's counts

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._records

    def __iter__(self) -> Iterator[Later]:
        """Every record, the oldest first (a copy: the store may change meanwhile)."""
        return iter(self._records)

    def tally(self, view: LaterView) -> Tally:
        """``view``'s counts (its caps read them)."""
        return self._tallies.setdefault(view, Tally())

    def add(self, record: Later) -> Later:
        """Keep ``record`` (a new id: the views make them unguessable)."""
        if record.id in self._records:
            raise ValueError(f"{record.id} exists already")
        self._records.add(record.owner, record.id, record)
        tally = self.tally(record.view)
        tally.open += 1
        tally.open_of.up(record.owner)
        self._unfetched.up(record.owner)
        record.outcome.add_done_callback(lambda _: self._settle(record))
        return record

    def find(self, record_id: object) -> Later | None:
        """The record ``record_id``, whoever owns it (never for a request: ``get`` is)."""
        return self._records.get(record_id) if isinstance(record_id, str) else None

    def get(self, record_id: Any, owner: str) -> Later | None:
        """``owner``'s record ``record_id``; another owner's is None, as an unknown one is."""
        record = self._records.get(record_id) if isinstance(record_id, str) else None
        return record if record is not None and record.owner == owner else None

    def of(self, owner: str) -> list[Later]:
        """``owner``'s records, the oldest first."""
        return self._records.of(owner)

    def holds(self, owner: str) -> bool:
        """Whether ``owner`` has work open, or an outcome it has not been handed yet."""
        return owner in self._unfetched

    def mark_fetched(self, record: Later) -> None:
        """Its outcome was handed out (counted once): its owner holds it no more."""
        if record.fetched is not None or not record.done:
            return
        record.fetched = self.clock()
        if self._records.get(record.id) is record:
            self._unfetched.down(record.owner)

    def forget(self, record: Later) -> bool:
        """Drop ``record`` (its work left as it is); False when it was gone already."""
        if record.timer is not None:
            record.timer.cancel()
        if self._records.get(record.id) is not record:
            return False
        self._records.remove(record.owner, record.id)
        tally = self.tally(record.view)
        if record.id in tally.kept:
            del tally.kept[record.id]
            tally.kept_of.down(record.owner)
        else:
            tally.open -= 1
            tally.open_of.down(record.owner)
        if record.fetched is None:
            self._unfetched.down(record.owner)
        return True

    async def close_owner(self, owner: str) -> None:
        """``owner`` went away: its live work is withdrawn and ended, all of it forgotten."""
        await self.end(self.of(owner), stopping=False)

    async def end(self, records: list[Later], *, stopping: bool,
                  grace: float = OWNED_CLOSE_GRACE_SECONDS) -> None:
        """Withdraw the live ones of ``records`` (given the oldest first; withdrawn the
        newest first: a task goes before the ticket of the batch it waits on, so it ends
        cancelled), give their work the grace, then forget them all."""
        running = [record.running for record in records if not record.running.done()]
        for record in reversed(records):
            if not record.done:
                record.view.withdraw(record, stopping=stopping)
        await end_with_grace(running, grace)
        for record in records:
            self.forget(record)

    def _settle(self, record: Later) -> None:
        if self._records.get(record.id) is not record:
            return  # forgotten before it ended (its time ran out, or its owner went)
        record.settled = self.clock()
        tally = self.tally(record.view)
        tally.open -= 1
        tally.open_of.down(record.owner)
        tally.kept[record.id] = record
        tally.kept_of.up(record.owner)


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
