"""HubWatch: an entry's settlement wakes its waiter; changes reach subscribers; sweeps time out."""

from __future__ import annotations

import asyncio

from dsh_cli.hub import HubStore
from dsh_cli.hub.records import Change
from dsh_cli.hub.watch import HubWatch

BATCH = {"questions": [{"id": "q", "question": "Go?", "options": [{"label": "yes"}]}]}


def _ask(store: HubStore, timeout: float | None = None) -> str:
    return store.ask(token="ci", batch=BATCH, agent="a", machine="m", cwd="/", timeout=timeout).id


def test_a_waiter_wakes_on_the_answer_and_subscribers_hear_each_change(tmp_path):
    async def main() -> None:
        store = HubStore.open(tmp_path / "hub.db")
        watch = HubWatch(store)
        heard: list[Change | None] = []
        watch.subscribe(heard.append)
        await watch.start()
        try:
            entry_id = await asyncio.to_thread(_ask, store)
            waiter = asyncio.ensure_future(watch.settled(entry_id))
            await asyncio.sleep(0)
            assert not waiter.done()
            await asyncio.to_thread(store.answer, entry_id, {"answers": {"q": "yes"}}, "alice")
            entry = await asyncio.wait_for(waiter, 10)
            assert (entry.state, entry.answered_by) == ("answered", "alice")
            # already settled: a late waiter returns at once
            assert (await asyncio.wait_for(watch.settled(entry_id), 10)).state == "answered"
            while [c.event for c in heard if c is not None] != ["ask", "answer"]:
                await asyncio.sleep(0.01)
        finally:
            await watch.close()
            store.close()

    asyncio.run(main())


def test_the_sweep_times_out_an_entry_past_its_deadline(tmp_path):
    async def main() -> None:
        store = HubStore.open(tmp_path / "hub.db")
        watch = HubWatch(store, sweep=0.05)
        await watch.start()
        try:
            entry_id = await asyncio.to_thread(_ask, store, 0.2)
            entry = await asyncio.wait_for(watch.settled(entry_id), 10)
            assert entry.state == "timeout"
        finally:
            await watch.close()
            store.close()

    asyncio.run(main())
