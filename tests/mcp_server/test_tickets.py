"""The tickets' view of the store of work fetched later: owners, caps, expiry, and waits
that own nothing."""

from __future__ import annotations

import asyncio

import pytest

from dsh_cli.core.errors import TICKET_EXPIRED, TOO_MANY_PENDING, UNKNOWN_TICKET, TicketError
from dsh_cli.core.signal import AbortSignal
from dsh_cli.mcp_server.owned.work import LaterWork
from dsh_cli.mcp_server.tickets import Tickets


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_a_ticket_is_seen_by_its_owner_only_and_an_unknown_one_reads_the_same():
    async def main():
        store = Tickets()
        store.add("q_1", "a", asyncio.get_running_loop().create_future())
        assert store.get("q_1", "a").id == "q_1"
        with pytest.raises(TicketError) as other:
            store.get("q_1", "b")
        with pytest.raises(TicketError) as never:
            store.get("q_2", "b")
        return other.value, never.value

    other, never = run(main())
    assert other.code == never.code == UNKNOWN_TICKET
    assert str(other).replace("q_1", "") == str(never).replace("q_2", "")


def test_a_wait_returns_when_the_work_settles_and_a_cancelled_wait_leaves_it_running():
    async def main():
        store = Tickets()
        work = asyncio.get_running_loop().create_future()
        store.add("q_1", "a", work)
        first = asyncio.ensure_future(store.wait("q_1", "a", 30))
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert not work.cancelled()
        second = asyncio.ensure_future(store.wait("q_1", "a", 30))
        await asyncio.sleep(0)
        work.set_result("answer")
        ticket = await second
        return ticket.outcome.result(), ticket.fetched is not None, store.open_count

    assert run(main()) == ("answer", True, 0)


def test_the_open_cap_refuses_before_the_work_starts():
    async def main():
        store = Tickets(open_limit=2)
        loop = asyncio.get_running_loop()
        store.add("q_1", "a", loop.create_future())
        store.add("q_2", "b", loop.create_future())
        with pytest.raises(TicketError) as refused:
            store.admit()
        return refused.value

    assert run(main()).code == TOO_MANY_PENDING


def test_a_settled_outcome_is_kept_for_its_time_then_reads_expired():
    clock = Clock()

    async def main():
        store = Tickets(LaterWork(clock=clock), keep=100, keep_fetched=10)
        loop = asyncio.get_running_loop()
        for name in ("q_fetched", "q_left"):
            work = loop.create_future()
            store.add(name, "a", work)
            work.set_result(name)
        await asyncio.sleep(0)
        await store.wait("q_fetched", "a", 0)
        clock.now += 11
        with pytest.raises(TicketError) as fetched:
            store.get("q_fetched", "a")
        assert store.get("q_left", "a").outcome.result() == "q_left"
        clock.now += 90
        with pytest.raises(TicketError) as left:
            store.get("q_left", "a")
        with pytest.raises(TicketError) as other:
            store.get("q_left", "b")  # expiry tells another owner nothing either
        return fetched.value.code, left.value.code, other.value.code, len(store)

    assert run(main()) == (TICKET_EXPIRED, TICKET_EXPIRED, UNKNOWN_TICKET, 0)


def test_past_an_owners_kept_cap_its_new_work_is_refused_and_nothing_kept_is_forgotten():
    async def main():
        store = Tickets(settled_limit=2)
        loop = asyncio.get_running_loop()
        for index in range(2):
            work = loop.create_future()
            store.add(f"q_{index}", "a", work)
            work.set_result(index)
            await asyncio.sleep(0)
        with pytest.raises(TicketError) as refused:
            store.admit("a")
        for index in range(3):  # another owner's outcomes take nothing of a's
            work = loop.create_future()
            store.add(f"r_{index}", f"b{index}", work)
            work.set_result(index)
            await asyncio.sleep(0)
        return refused.value.code, [t.id for t in store.owned("a")]

    assert run(main()) == (TOO_MANY_PENDING, ["q_0", "q_1"])


def test_an_open_ticket_past_its_ttl_is_aborted_and_forgotten():
    clock = Clock()
    aborted = []

    async def main():
        store = Tickets(LaterWork(clock=clock))
        signal = AbortSignal()
        signal.on_abort(aborted.append)
        store.add("t_1", "a", asyncio.get_running_loop().create_future(), ttl=5, signal=signal)
        clock.now += 6
        with pytest.raises(TicketError) as gone:
            store.get("t_1", "a")
        return gone.value.code, store.open_count

    assert run(main()) == (TICKET_EXPIRED, 0)
    assert aborted == ["the agent's session ended"]


def test_closing_an_owner_aborts_its_open_work_and_keeps_the_others():
    async def main():
        store = Tickets()
        loop = asyncio.get_running_loop()
        mine = loop.create_future()
        theirs = loop.create_future()
        signal = AbortSignal()
        signal.on_abort(lambda reason: mine.set_result("aborted"))
        store.add("q_1", "a", mine, signal=signal)
        store.add("q_2", "b", theirs)
        await store.close_owner("a")
        with pytest.raises(TicketError) as gone:
            store.get("q_1", "a")
        return mine.result(), gone.value.code, store.get("q_2", "b").done, store.open_count

    assert run(main()) == ("aborted", UNKNOWN_TICKET, False, 1)


def test_a_fetch_of_one_kind_does_not_see_a_ticket_of_another():
    async def main():
        store = Tickets()
        store.add("t_1", "a", asyncio.get_running_loop().create_future(), kind="task")
        assert store.get("t_1", "a").kind == "task"
        with pytest.raises(TicketError) as other_kind:
            store.get("t_1", "a", kind="ask")
        return other_kind.value.code

    assert run(main()) == UNKNOWN_TICKET


def test_the_per_owner_cap_counts_each_owner_and_frees_as_work_ends():
    async def main():
        store = Tickets(owner_limit=1)
        loop = asyncio.get_running_loop()
        work = loop.create_future()
        store.add("q_1", "a", work)
        with pytest.raises(TicketError) as refused:
            store.add("q_2", "a", loop.create_future())
        store.add("q_3", "b", loop.create_future())  # another owner has its own room
        work.set_result("done")
        await asyncio.sleep(0)
        store.add("q_4", "a", loop.create_future())  # the settled one left the open cap
        await store.close_owner("b")
        store.admit("b")
        await store.close()
        return refused.value.code, store.open_count

    assert run(main()) == (TOO_MANY_PENDING, 0)


def test_an_owner_holds_work_while_a_ticket_is_open_or_its_outcome_unfetched():
    async def main():
        store = Tickets()
        work = asyncio.get_running_loop().create_future()
        store.add("q_1", "a", work)
        states = [store.holds("a"), store.holds("b")]
        work.set_result("answer")
        await asyncio.sleep(0)
        states.append(store.holds("a"))  # settled, never fetched
        await store.wait("q_1", "a", 0)
        states.append(store.holds("a"))  # fetched: kept for a late re-fetch, held no more
        return states

    assert run(main()) == [True, False, True, False]
