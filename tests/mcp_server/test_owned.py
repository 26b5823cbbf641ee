"""The one store of work fetched later (``mcp_server/owned/``): counts by owner, and open
work ended with one grace at exit, for tickets and tasks alike."""

from __future__ import annotations

import asyncio

from dsh_cli.mcp_server.owned.work import OwnedRecords, OwnerCounts, end_with_grace


def test_an_owner_with_nothing_counted_has_no_key():
    counts = OwnerCounts()
    counts.up("a")
    counts.up("a")
    counts.up("b")
    counts.down("a")
    assert counts["a"] == 1 and "a" in counts
    counts.down("a")
    counts.down("b")
    counts.down("c")  # never counted: stays absent, never negative
    assert counts["a"] == 0 and "a" not in counts and "c" not in counts
    assert counts._of == {}


def test_records_are_found_by_id_and_by_owner_oldest_first_and_an_owner_with_none_goes():
    records: OwnedRecords[str] = OwnedRecords()
    for owner, record_id in [("a", "1"), ("b", "2"), ("a", "3")]:
        records.add(owner, record_id, f"{owner}{record_id}")
    assert records.of("a") == ["a1", "a3"] and records.get("2") == "b2" and len(records) == 3
    records.remove("b", "2")
    records.remove("b", "2")  # twice: nothing more to remove
    assert "2" not in records and records.of("b") == [] and records._of.keys() == {"a"}
    assert list(records) == ["a1", "a3"]


def test_work_that_settles_within_the_grace_ends_itself_and_stuck_work_is_cancelled():
    async def main() -> tuple[str, bool, bool]:
        release = asyncio.Event()

        async def settles() -> str:
            await release.wait()
            return "recorded"

        async def stuck() -> None:
            await asyncio.Event().wait()

        settling = asyncio.ensure_future(settles())
        hanging = asyncio.ensure_future(stuck())
        loop = asyncio.get_running_loop()
        loop.call_soon(release.set)  # the aborted batch settles itself at once
        await end_with_grace([settling, hanging], grace=0.2)
        return settling.result(), hanging.cancelled(), hanging.done()

    assert asyncio.run(main()) == ("recorded", True, True)



def test_an_owner_that_goes_closes_its_tickets_and_tasks_together_and_no_one_elses():
    from dsh_cli.core.signal import AbortSignal
    from dsh_cli.mcp_server.owned.work import LaterWork
    from dsh_cli.mcp_server.tasks import Tasks
    from dsh_cli.mcp_server.tickets import Tickets

    async def main() -> tuple[bool, bool, list[str], list[bool], list[str]]:
        later = LaterWork()
        tickets, tasks = Tickets(later), Tasks(later)
        signals: dict[str, AbortSignal] = {}

        def ticket(owner: str) -> None:
            signal = signals[f"ticket {owner}"] = AbortSignal()
            tickets.add(f"t-{owner}", owner, asyncio.ensure_future(signal.wait()),
                        signal=signal)

        async def waits(signal: AbortSignal) -> dict[str, object]:
            await signal.wait()
            return {}

        for owner in ("a", "b"):
            ticket(owner)
            tasks.create(owner, waits)
        await asyncio.sleep(0)  # the tasks' work has started
        held_before = later.holds("a") and later.holds("b")
        await later.close_owner("a")
        return (held_before, later.holds("a"), [t.owner for t in tickets.owned("b")],
                [signals["ticket a"].aborted, signals["ticket b"].aborted],
                [record.owner for record in tasks.owned("a") + tasks.owned("b")])

    held_before, held_after, kept_tickets, aborted, kept_tasks = asyncio.run(main())
    assert held_before and not held_after
    assert kept_tickets == ["b"] and aborted == [True, False] and kept_tasks == ["b"]


def test_only_the_owner_rule_spells_a_sessions_owner():
    """``http:<session id>`` is written in ``owned/owners.py`` alone: tickets, tasks and the
    HTTP door take it from there, so the two stores cannot drift apart again."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "dsh_cli"
    spelled = sorted(
        str(path.relative_to(package)) for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.JoinedStr) and node.values
        and isinstance(node.values[0], ast.Constant) and node.values[0].value == "http:")
    assert spelled == ["mcp_server/owned/owners.py"]


def test_tickets_and_tasks_are_one_record_type_in_one_store_each_view_seeing_its_own():
    """One store of work fetched later: a ticket and a task are both ``Later`` records of
    it, counted together for ``holds``; each view reads only its own records."""
    import pytest

    from dsh_cli.core.errors import UNKNOWN_TICKET, TicketError
    from dsh_cli.mcp_server.owned.work import Later, LaterWork
    from dsh_cli.mcp_server.tasks import Tasks
    from dsh_cli.mcp_server.tickets import Tickets

    async def main() -> None:
        later = LaterWork()
        tickets, tasks = Tickets(later), Tasks(later)
        answered = asyncio.get_running_loop().create_future()
        ticket = tickets.add("q_1", "http:a", answered, kind="ask")

        async def work(signal: object) -> dict[str, object]:
            return {"content": []}

        task = tasks.create("http:a", work)
        assert type(ticket) is type(task) is Later
        assert (ticket.kind, task.kind) == ("ask", "task")
        assert later.of("http:a") == [ticket, task] and len(later) == 2
        assert tasks.get("http:a", ticket.id) is None and tasks.owned("http:a") == [task]
        with pytest.raises(TicketError) as unknown:
            tickets.get(task.id, "http:a")
        assert unknown.value.code == UNKNOWN_TICKET and tickets.owned("http:a") == [ticket]
        await task.ended()
        tasks.mark_fetched(task)
        assert later.holds("http:a")  # the ticket is open still
        answered.set_result("the answer")
        await tickets.wait("q_1", "http:a", 0)
        assert not later.holds("http:a")  # both handed over: one count says so
        await later.close_owner("http:a")
        assert len(later) == 0

    asyncio.run(asyncio.wait_for(main(), 5))


def test_an_owner_that_goes_withdraws_a_task_before_the_ticket_it_waits_on():
    """A told batch's ticket and its task share one abort signal; the newest is withdrawn
    first, so the task ends cancelled for the session's end, not completed with an abort."""
    from dsh_cli.core.signal import AbortSignal
    from dsh_cli.mcp_server.owned.work import LaterWork
    from dsh_cli.mcp_server.tasks import Tasks
    from dsh_cli.mcp_server.tasks.store import standing
    from dsh_cli.mcp_server.tickets import Tickets

    async def main() -> tuple[str, str | None, str | None]:
        later = LaterWork()
        tickets, tasks = Tickets(later), Tasks(later)
        signal = AbortSignal()
        batch = asyncio.ensure_future(signal.wait())  # the async batch: ends when aborted
        tickets.add("q_1", "http:a", batch, signal=signal, kind="ask")

        async def outcome(task_signal: AbortSignal) -> dict[str, object]:
            await batch  # the task waits for the batch's outcome
            return {"content": [], "isError": True}

        task = tasks.create("http:a", outcome, signal=signal)
        await later.close_owner("http:a")
        end = standing(task)
        return end.status, end.message, signal.reason

    assert asyncio.run(asyncio.wait_for(main(), 5)) == (
        "cancelled", "the client's session ended", "the client's session ended")


def test_a_server_keeps_its_tickets_and_tasks_in_one_store_and_refuses_two():
    """``build_server`` gives the task layer the tickets' store, so the HTTP door's
    ``holds`` is that one store's count; a server built with two would let the door close
    a session that holds work, so it is refused."""
    import pytest

    from dsh_cli.interaction import UserInteraction
    from dsh_cli.mcp_server.server import _later_work, build_server
    from dsh_cli.mcp_server.service import AskService
    from dsh_cli.mcp_server.tasks import TaskLayer
    from dsh_cli.mcp_server.tickets import Tickets

    service = AskService(UserInteraction())
    server = build_server(service)
    layers = [layer for layer in server.middleware if isinstance(layer, TaskLayer)]
    assert [layer.tasks.store for layer in layers] == [service.tickets.store]
    assert _later_work(server, service.tickets) is service.tickets.store
    with pytest.raises(ValueError, match="one store"):
        _later_work(server, Tickets())
