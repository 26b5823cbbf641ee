"""The async batch table (``interaction/later.py``): tickets, first wins, the cap, memory."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest

from dsh_cli.core.errors import TICKET_NOT_PENDING, TOO_MANY_PENDING, UNKNOWN_TICKET
from dsh_cli.interaction import (
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
)


class Waits:
    """A provider that shows nothing itself (the relay's, the web's)."""

    async def ask(self, context):
        await asyncio.get_running_loop().create_future()


def request(text: str = "Which one?") -> AskUserQuestionRequest:
    return AskUserQuestionRequest(questions=[AskUserQuestionItem(
        id="q", question=text, options=[{"label": "A"}, {"label": "B"}])])


def test_a_cancel_racing_an_answer_first_wins_and_the_loser_is_told():
    async def main():
        ui = UserInteraction()
        ui.register_provider(Waits())
        ticket = ui.later.submit(request())
        assert ui.pending.respond(ticket, [{"id": "q", "selected": ["B"]}]).accepted
        with pytest.raises(UserInteractionError) as lost:
            await ui.later.cancel(ticket)  # the answer came first
        assert lost.value.code == TICKET_NOT_PENDING
        await asyncio.wait_for(ui.later.wait(), 5)
        [(got, message)] = ui.later.take_arrived()
        assert got == ticket and '"selected":["B"]' in message
        with pytest.raises(UserInteractionError) as late:
            await ui.later.cancel(ticket)  # delivered: still known, no longer pending
        assert late.value.code == TICKET_NOT_PENDING
        # and the other way round: a cancel first, the relay's answer refused
        second = ui.later.submit(request())
        await ui.later.cancel(second)
        ack = ui.pending.respond(second, [{"id": "q", "selected": ["A"]}])
        assert (ack.accepted, ack.reason) == (False, "not-pending")
        [(got, message)] = ui.later.take_arrived()
        assert got == second and '"code":"ASK_CANCELLED"' in message

    asyncio.run(main())


def test_unknown_tickets_are_one_clear_error():
    async def main():
        ui = UserInteraction()
        ui.register_provider(Waits())
        for call in (ui.later.cancel("q_nope"), ui.later.show("q_nope")):
            with pytest.raises(UserInteractionError) as error:
                await call
            assert error.value.code == UNKNOWN_TICKET
            assert "q_nope" in error.value.message

    asyncio.run(main())


CAP = textwrap.dedent("""
    import asyncio, json, resource
    from dsh_cli.interaction import (AskUserQuestionItem, AskUserQuestionRequest,
                                     UserInteraction, UserInteractionError)

    class Waits:
        async def ask(self, context):
            await asyncio.get_running_loop().create_future()

    async def main():
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ui = UserInteraction()
        ui.register_provider(Waits())
        def ask(i):
            return AskUserQuestionRequest(questions=[AskUserQuestionItem(
                id="q", question=f"question {i}?", options=[{"label": "A"}, {"label": "B"}])])
        tickets = [ui.later.submit(ask(i)) for i in range(10_000)]
        await asyncio.sleep(0)
        try:
            ui.later.submit(ask(10_000))
            code = None
        except UserInteractionError as error:
            code, message = error.code, error.message
        # one answered makes room for one more
        ui.pending.respond(tickets[0], [{"id": "q", "selected": ["A"]}])
        await ui.later.wait()
        ui.later.take_arrived()
        ui.later.submit(ask(10_001))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"code": code, "message": message, "open": len(ui.later.open()),
                          "grown_mb": (peak - base) / 1024}))

    asyncio.run(main())
""")


def test_ten_thousand_pending_async_batches_then_a_clear_cap_and_bounded_memory():
    # the root conftest put this checkout first on PYTHONPATH for children
    run = subprocess.run([sys.executable, "-c", CAP], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["code"] == TOO_MANY_PENDING
    assert "10,000" in report["message"] and "delivery" in report["message"]
    assert report["open"] == 10_000
    assert report["grown_mb"] < 150  # measured: about 65 MB for 10,000 open batches
