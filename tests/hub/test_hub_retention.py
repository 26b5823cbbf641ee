"""Retention: the serving hub's loop forgets settled entries and their audit past the
retention, a page at a time off the event loop, and keeps pending ones however old."""

from __future__ import annotations

import asyncio

from dsh_cli.hub import HubStore
from dsh_cli.hub.records import HubStoreError
from dsh_cli.hub.retention import DAY, keep_pruning, prune_once

BATCH = {"questions": [{"id": "db", "question": "Which database?", "options": ["a", "b"]}]}


class Clock:
    """A clock the test moves: ninety days pass without waiting."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def ask(store: HubStore):
    return store.ask(token="ci-bot", batch=BATCH, agent="a", machine="m", cwd="/")


def fill(store: HubStore, clock: Clock) -> tuple[list[str], str, str]:
    """Seven old settled entries, an old pending one, a recent settled one."""
    old = []
    for number in range(7):
        entry = ask(store)
        store.claim(entry.id, "alice", 30)
        if number % 2:
            store.answer(entry.id, {"type": "question/answer", "answers": []}, by="alice")
        else:
            store.cancel(entry.id, by="ci-bot")
        old.append(entry.id)
    waiting = ask(store).id
    clock.now += 80 * DAY
    recent = ask(store)
    store.cancel(recent.id, by="ci-bot")
    clock.now += 11 * DAY  # the old ones are 91 days old, the recent one 11
    return old, waiting, recent.id


def test_the_loop_prunes_in_pages_and_keeps_pending_and_recent(hub_location):
    clock = Clock()
    with HubStore.open(hub_location, clock=clock) as store:
        old, waiting, recent = fill(store, clock)
        passes: list[tuple[int, int]] = []
        reported: list[str] = []

        async def run() -> None:
            second = asyncio.Event()

            def heard(entries: int, audit: int) -> None:
                passes.append((entries, audit))
                if len(passes) == 2:
                    second.set()

            # a page of 2: the 7 old entries' 21 audit rows take several transactions
            loop = asyncio.create_task(keep_pruning(store, 90, every=0.01, page=2,
                                                    report=reported.append, pruned=heard))
            await asyncio.wait_for(second.wait(), 60)
            loop.cancel()

        asyncio.run(run())
        assert passes[0] == (7, 21) and passes[1] == (0, 0)
        assert reported == ["retention: forgot 7 settled entries and 21 audit rows older "
                            "than 90 days"]
        assert all(store.get(entry) is None for entry in old)
        assert store.get(waiting).state == "pending" and store.get(recent) is not None
        assert [row.action for row in store.audit(waiting)] == ["ask"]
        assert [row.action for row in store.audit(recent)] == ["ask", "cancel"]
        assert store.audit(old[0]) == []


def test_zero_days_keeps_everything_and_a_store_error_is_reported_not_raised(tmp_path):
    clock = Clock()
    store = HubStore.open(tmp_path / "hub.db", clock=clock)
    old, _, _ = fill(store, clock)
    asyncio.run(keep_pruning(store, 0))  # returns at once
    assert store.get(old[0]) is not None
    assert asyncio.run(prune_once(store, 90)) == (7, 21)

    class Broken:
        def prune(self, older_than: float, limit: int) -> tuple[int, int]:
            raise HubStoreError("hub store postgresql://db/hub: server closed the connection")

    reported: list[str] = []

    async def run() -> None:
        tried = asyncio.Event()
        loop = asyncio.create_task(keep_pruning(
            Broken(), 90, every=0.01,  # type: ignore[arg-type]
            report=lambda line: (reported.append(line), tried.set() if len(reported) > 1
                                 else None)))
        await asyncio.wait_for(tried.wait(), 60)  # reported, and tried again
        loop.cancel()

    asyncio.run(run())
    assert reported[0] == ("STORE_ERROR: retention: hub store postgresql://db/hub: server "
                           "closed the connection")
    store.close()
