"""The tasks' own rules: expiry that never drops a decided task, and what an owner holds."""

from __future__ import annotations

import asyncio

from dsh_cli.mcp_server.tasks.store import Tasks, standing

RESULT = {"content": [{"type": "text", "text": "the human's answer"}], "isError": False}


def test_a_task_whose_answer_is_sealed_outlives_its_ttl_until_the_answer_is_recorded():
    """The TTL runs out between the answer (the signal sealed) and its record: the task is
    not withdrawn, a look-up still finds it, and it is forgotten once it has completed."""
    async def main():
        store, recorded = Tasks(), asyncio.Event()

        async def work(signal):
            await recorded.wait()  # the answer is on its way to the task's record
            return RESULT

        record = store.create("stdio", work, ttl_ms=60_000)
        record.signal.seal()  # the desk's answer was accepted
        store.expire(record)  # what the TTL's timer calls
        found = store.get("stdio", record.id)
        refused = store.cancel(record)
        recorded.set()
        await record.ended()
        ended = (standing(record).status, standing(record).result)
        for _ in range(3):  # the forgetting runs once the end is seen
            await asyncio.sleep(0)
        return found is record, refused, ended, store.get("stdio", record.id)

    found, refused, ended, after = asyncio.run(asyncio.wait_for(main(), 5))
    assert found and not refused
    assert ended == ("completed", RESULT)
    assert after is None  # its time to live had run out: forgotten once recorded


def test_a_live_task_past_its_ttl_is_withdrawn_and_forgotten_at_once():
    async def main():
        store = Tasks()

        async def work(signal):
            await signal.wait()
            return RESULT

        record = store.create("stdio", work, ttl_ms=60_000)
        store.expire(record)
        return standing(record).status, standing(record).message, store.get("stdio", record.id)

    status, message, after = asyncio.run(asyncio.wait_for(main(), 5))
    assert status == "cancelled" and "time to live" in message and after is None


def test_what_an_owner_holds_is_counted_through_create_end_fetch_and_forget():
    """``holds`` (the HTTP door's question, asked of every session) follows each change:
    a running task holds, an ended one holds until its end is handed over, a forgotten
    one holds nothing; another owner's tasks never count."""
    async def main():
        from dsh_cli.mcp_server.tasks import wire_2025_11_25 as wire

        store, seen = Tasks(), []
        answered = asyncio.Event()

        async def work(signal):
            await answered.wait()
            return RESULT

        first = store.create("http:a", work)
        second = store.create("http:a", work)
        store.create("http:b", work)
        seen.append(("running", store.holds("http:a"), store.holds("http:c")))
        await wire.get(store, "http:a", {"taskId": first.id})  # not ended: nothing handed
        answered.set()
        await first.ended()
        await second.ended()
        await wire.get(store, "http:a", {"taskId": first.id})
        seen.append(("one fetched", store.holds("http:a")))
        await wire.result(store, "http:a", {"taskId": second.id})
        await wire.get(store, "http:a", {"taskId": second.id})  # handed twice, counted once
        seen.append(("both fetched", store.holds("http:a"), store.holds("http:b")))
        third = store.create("http:a", work)
        await third.ended()
        seen.append(("ended, unfetched", store.holds("http:a")))
        store.forget(third)
        store.forget(third)  # a second forget (expiry, then the session's end) is nothing
        await wire.get(store, "http:b", {"taskId": store.owned("http:b")[0].id})
        seen.append(("forgotten", store.holds("http:a"), store.holds("http:b"),
                     [record.id for record in store.owned("http:a")]
                     == [first.id, second.id]))
        return seen

    assert asyncio.run(asyncio.wait_for(main(), 5)) == [
        ("running", True, False), ("one fetched", True), ("both fetched", False, True),
        ("ended, unfetched", True), ("forgotten", False, False, True)]
