"""``HubWatch``: one hub process's ear on its store, brought to the event loop.

The store's ``Listener`` blocks, so one thread per hub process waits on it and hands each
``Change`` to the loop; there, whoever subscribed hears it (a desk's stream), and whoever
awaits an entry's settlement (an agent's call) re-reads that entry off the loop. A listener
that may have missed changes (PostgreSQL restarted, SQLite's queue overflowed) is heard as
``None``: every subscriber and every waiter re-reads. The same thread times out entries
past their deadline every ``sweep`` seconds; each process sweeps, and the conditional
update lets exactly one of them time an entry out.

Each sweep also renews this process's heartbeat in the store and withdraws the pending
entries whose waiting call lived in a process whose heartbeat is older than
``orphan_seconds()`` (it was killed: nobody waits for their answers any more); the desks
hear them withdrawn as any other cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable

from dsh_cli.core.tuning import seconds_from_env
from dsh_cli.hub.engine import Listener
from dsh_cli.hub.records import Change, Entry, HubStoreError
from dsh_cli.hub.store import HubStore

__all__ = ["ORPHAN_SECONDS", "SWEEP_SECONDS", "Heeded", "HubWatch", "orphan_seconds"]

SWEEP_SECONDS = 1.0  # how often a hub process beats, and times out entries past their deadline
# how long a hub process's heartbeat may be silent before the entries its calls waited on
# are withdrawn: ten missed beats, so a process busy for a moment (or the store slow) is
# not taken for dead (DSH_HUB_ORPHAN_SECONDS: tests)
ORPHAN_SECONDS = 10.0
WAIT_SECONDS = 0.25  # how long one listener wait lasts: the thread's bound on closing

Heeded = Callable[[Change | None], None]  # a change, or None: re-read, some were missed


def orphan_seconds() -> float:
    """How long a silent heartbeat is trusted: ``ORPHAN_SECONDS``, or ``DSH_HUB_ORPHAN_SECONDS``."""
    return seconds_from_env("DSH_HUB_ORPHAN_SECONDS", ORPHAN_SECONDS)


class HubWatch:
    """Hears ``store``'s changes on a thread of its own and wakes the event loop."""

    def __init__(self, store: HubStore, *, sweep: float = SWEEP_SECONDS,
                 orphans: float | None = None,
                 report: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.sweep = sweep
        self.orphans = orphans if orphans is not None else orphan_seconds()
        self._report = report or (lambda line: None)
        self._subscribers: list[Heeded] = []
        self._waiting: dict[str, list[asyncio.Future[Entry]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rechecks: set[asyncio.Task[None]] = set()  # held until done (the loop's are weak)

    async def start(self) -> None:
        """Start listening: every change committed from now on is heard."""
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self.store.beat)  # alive before any call waits here
        listener = await asyncio.to_thread(self.store.listen)
        self._thread = threading.Thread(target=self._run, args=(listener,),
                                        name="dsh-hub-watch", daemon=True)
        self._thread.start()

    async def close(self) -> None:
        """Stop listening; whoever still waits is cancelled."""
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)
        for futures in self._waiting.values():
            for future in futures:
                future.cancel()
        self._waiting.clear()

    def subscribe(self, heed: Heeded) -> Callable[[], None]:
        """Call ``heed`` on the loop with each change (None: re-read); the unsubscriber."""
        self._subscribers.append(heed)
        return lambda: self._subscribers.remove(heed) if heed in self._subscribers else None

    async def settled(self, entry_id: str) -> Entry:
        """The entry once it is no longer pending (answered, cancelled, timed out)."""
        assert self._loop is not None, "HubWatch.start first"
        future: asyncio.Future[Entry] = self._loop.create_future()
        self._waiting.setdefault(entry_id, []).append(future)
        try:
            await self._recheck(entry_id)  # settled before the waiter was registered
            return await future
        finally:
            waiters = self._waiting.get(entry_id)
            if waiters is not None and future in waiters:
                waiters.remove(future)
                if not waiters:
                    del self._waiting[entry_id]

    async def _recheck(self, entry_id: str) -> None:
        try:
            entry = await asyncio.to_thread(self.store.get, entry_id)
        except HubStoreError as error:
            self._report(f"{error.code}: {error.message}")
            return
        if entry is None or entry.state == "pending":
            return
        for future in self._waiting.get(entry_id, []):
            if not future.done():
                future.set_result(entry)

    def _heard(self, change: Change | None) -> None:
        """On the loop: tell the subscribers, re-read what the waiters wait for."""
        for heed in list(self._subscribers):
            try:
                heed(change)
            except Exception as error:  # one broken subscriber never deafens the others
                self._report(f"hub watch: {type(error).__name__}: {error}")
        if change is None:
            ids = list(self._waiting)
        elif change.entry_id in self._waiting and change.event not in ("claim", "release"):
            ids = [change.entry_id]
        else:
            ids = []
        for entry_id in ids:
            task = asyncio.ensure_future(self._recheck(entry_id))
            self._rechecks.add(task)
            task.add_done_callback(self._rechecks.discard)

    def _run(self, ear: Listener) -> None:
        """The thread: wait on the listener, hand what it hears to the loop, sweep."""
        next_sweep = time.monotonic()
        try:
            while not self._stop.is_set():
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + self.sweep
                    try:
                        self.store.beat()
                        self.store.expire()  # each timeout is heard as its own change
                        self.store.withdraw_orphans(self.orphans)  # each cancel likewise
                    except HubStoreError as error:
                        self._report(f"{error.code}: {error.message}")
                try:
                    heard = ear.wait(min(WAIT_SECONDS, max(0.0, next_sweep - time.monotonic())))
                except HubStoreError as error:
                    self._report(f"{error.code}: {error.message}")
                    heard = None
                    self._stop.wait(WAIT_SECONDS)  # the store is away: no busy loop
                if heard is None or heard.missed:
                    self._post(None)
                if heard is not None:
                    for change in heard.changes:
                        self._post(change)
        finally:
            ear.close()

    def _post(self, change: Change | None) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop closed first: nobody to tell
            self._loop.call_soon_threadsafe(self._heard, change)
