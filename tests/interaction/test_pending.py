"""``PendingQuestions``: register before announce, first valid response wins (``relay.md``)."""

from __future__ import annotations

import asyncio

import pytest

from dsh_cli.core.events import QuestionRequested, QuestionResolved
from dsh_cli.interaction import (
    ASK_CANCELLED,
    BAD_RESPONSE,
    NOT_PENDING,
    WRONG_SESSION,
    PendingQuestions,
    UserInteraction,
    UserInteractionError,
)

DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL"}, {"label": "MySQL"}, {"label": "SQLite"}]}
NAME = {"id": "name", "question": "Project name?"}
GOOD = [{"id": "db", "selected": ["SQLite"]}, {"id": "name", "selected": [], "custom": " acme "}]


async def shown(ui, provider, request):
    """Start an ask and wait until its ``question/requested`` is out; (task, rpc_id)."""
    announced = []
    unsubscribe = ui.events.subscribe(
        lambda e: announced.append(e.rpc_id) if isinstance(e, QuestionRequested) else None
    )
    task = asyncio.ensure_future(ui.ask(request))
    while not (announced and provider.requests):
        await asyncio.sleep(0)
    unsubscribe()
    return task, announced[0]


def test_a_valid_response_settles_the_ask_and_closes_the_provider(run, probe, request_of,
                                                                  recorded):
    async def main():
        ui = UserInteraction(session_id="s1")
        events = recorded(ui)
        provider = probe()
        ui.register_provider(provider)
        task, rpc_id = await shown(ui, provider, request_of(DB, NAME))
        ack = ui.pending.respond(rpc_id, GOOD, session_id="s1")
        assert ack.to_json() == {"type": "response/ack", "rpc_id": rpc_id, "accepted": True}
        answer = await task
        assert answer.to_json() == {"answers": [
            {"id": "db", "selected": ["SQLite"]},
            {"id": "name", "selected": [], "custom": "acme"},
        ]}
        assert provider.cancelled == provider.requests
        resolved = [e.to_json() for e in events if isinstance(e, QuestionResolved)]
        assert resolved == [{"type": "question/resolved", "rpc_id": rpc_id,
                             "outcome": "answered", "answer": answer.to_json()}]

    run(main())


def test_the_first_valid_response_wins_and_later_ones_are_not_pending(run, probe, request_of):
    async def main():
        ui = UserInteraction(session_id="s1")
        provider = probe()
        ui.register_provider(provider)
        task, rpc_id = await shown(ui, provider, request_of(DB, NAME))
        first = ui.pending.respond(rpc_id, GOOD, session_id="s1")
        other = [{"id": "db", "selected": ["MySQL"]}, {"id": "name", "selected": []}]
        second = ui.pending.respond(rpc_id, other, session_id="s1")
        assert first.accepted
        assert (second.accepted, second.reason) == (False, NOT_PENDING)
        assert (await task).answers[0].selected == ["SQLite"]
        late = ui.pending.respond(rpc_id, GOOD, session_id="s1")
        assert (late.accepted, late.reason) == (False, NOT_PENDING)

    run(main())


def test_an_unknown_rpc_id_is_not_pending(run):
    async def main():
        ack = PendingQuestions("s1").respond("q_nope", [], session_id="s1")
        assert ack.to_json() == {"type": "response/ack", "rpc_id": "q_nope", "accepted": False,
                                 "reason": NOT_PENDING, "message": ack.message}
        assert ack.message

    run(main())


@pytest.mark.parametrize("answers", [
    [{"id": "db", "selected": ["SQLite"]}],
    [GOOD[1], GOOD[0]],
    [{"id": "db", "selected": ["Oracle"]}, GOOD[1]],
    [{"id": "db", "selected": ["SQLite", "SQLite"]}, GOOD[1]],
    [{"id": "db", "selected": ["SQLite", "MySQL"]}, GOOD[1]],
    [{"id": "db", "selected": ["SQLite"], "custom": "x"}, GOOD[1]],
    [GOOD[0], {"id": "name", "selected": [], "custom": "   "}],
    "not a list",
], ids=["missing", "reordered", "unknown-label", "duplicate-label", "two-on-single",
        "labels-and-custom", "blank-custom", "not-a-list"])
def test_a_bad_response_keeps_the_question_pending(run, probe, request_of, answers):
    async def main():
        ui = UserInteraction(session_id="s1")
        provider = probe()
        ui.register_provider(provider)
        task, rpc_id = await shown(ui, provider, request_of(DB, NAME))
        ack = ui.pending.respond(rpc_id, answers, session_id="s1")
        assert (ack.accepted, ack.reason) == (False, BAD_RESPONSE)
        assert ack.message
        await asyncio.sleep(0.01)
        assert not task.done()
        assert ui.pending.get(rpc_id) is not None
        assert ui.pending.respond(rpc_id, GOOD, session_id="s1").accepted
        assert (await task).answers[1].custom == "acme"

    run(main())


def test_a_response_for_another_session_keeps_the_question_pending(run, probe, request_of):
    async def main():
        ui = UserInteraction(session_id="s1")
        provider = probe()
        ui.register_provider(provider)
        task, rpc_id = await shown(ui, provider, request_of(DB, NAME))
        ack = ui.pending.respond(rpc_id, GOOD, session_id="s2")
        assert (ack.accepted, ack.reason) == (False, WRONG_SESSION)
        await asyncio.sleep(0.01)
        assert not task.done()
        assert ui.pending.respond(rpc_id, GOOD, session_id="s1").accepted
        await task

    run(main())


def test_cancel_from_outside_is_ask_cancelled(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction(session_id="s1")
        events = recorded(ui)
        provider = probe()
        ui.register_provider(provider)
        task, rpc_id = await shown(ui, provider, request_of(DB))
        for other in ("s2", None):  # another session's, or none: refused, still pending
            refused = ui.pending.cancel(rpc_id, other)
            assert (refused.accepted, refused.reason) == (False, WRONG_SESSION)
        assert ui.pending.cancel(rpc_id, "s1").accepted
        with pytest.raises(UserInteractionError) as caught:
            await task
        assert caught.value.code == ASK_CANCELLED
        assert caught.value.message == "the user cancelled the questions"
        assert provider.cancelled == provider.requests
        assert [e.outcome.event for e in events if isinstance(e, QuestionResolved)] == ["cancelled"]
        again = ui.pending.cancel(rpc_id, "s1")
        assert (again.accepted, again.reason) == (False, NOT_PENDING)

    run(main())


def test_replay_re_announces_every_pending_batch_with_the_same_ids(run, request_of):
    async def main():
        table = PendingQuestions("s1")
        first = table.register(request_of(DB, call_id="call_1"))
        second = table.register(request_of(NAME), rpc_id="q_resumed")
        replayed = [event.to_json() for event in table.replay()]
        assert [e["rpc_id"] for e in replayed] == [first.rpc_id, "q_resumed"]
        assert replayed[0] == first.announcement().to_json()
        assert replayed[0]["type"] == "question/requested"
        assert replayed[0]["session_id"] == "s1"
        assert replayed[0]["call_id"] == "call_1"
        assert replayed[1]["questions"] == [{"id": "name", "question": "Project name?",
                                             "multi_select": False}]
        assert table.respond(second.rpc_id, [{"id": "name", "selected": []}],
                             session_id="s1").accepted
        assert [e.rpc_id for e in table.replay()] == [first.rpc_id]

    run(main())


def test_replay_through_the_seam_matches_the_announcement(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction(session_id="s1")
        events = recorded(ui)
        provider = probe()
        ui.register_provider(provider)
        task, rpc_id = await shown(ui, provider, request_of(DB))
        assert [e.to_json() for e in ui.pending.replay()] == [events[0].to_json()]
        ui.pending.cancel(rpc_id, "s1")
        with pytest.raises(UserInteractionError):
            await task
        assert ui.pending.replay() == []

    run(main())


def test_an_rpc_id_is_a_fresh_string(run, request_of):
    async def main():
        table = PendingQuestions()
        ids = {table.register(request_of(DB)).rpc_id for _ in range(50)}
        assert len(ids) == 50
        assert all(isinstance(i, str) and i for i in ids)

    run(main())


def test_an_abort_after_the_answer_is_refused_and_an_answer_after_an_abort_is_not_pending(
        request_of):
    """First wins between a controller and the batch's abort signal, with no turn between:
    the abort settles the table as it happens, and an answer seals the signal."""
    from dsh_cli.core.errors import ASK_ABORTED
    from dsh_cli.core.signal import AbortSignal

    answer = [{"id": "db", "selected": ["SQLite"]}]

    async def main():
        table = PendingQuestions("s1")
        answered_signal, aborted_signal = AbortSignal(), AbortSignal()
        answered = table.register(request_of(DB, signal=answered_signal))
        aborted = table.register(request_of(DB, signal=aborted_signal))
        accepted = table.respond(answered.rpc_id, answer, "s1")
        late_abort = answered_signal.abort("the agent cancelled")
        took = aborted_signal.abort("the agent cancelled")
        late_answer = table.respond(aborted.rpc_id, answer, "s1")
        return (accepted.accepted, late_abort, answered.outcome.result().to_json(), took,
                late_answer.accepted, late_answer.reason, aborted.outcome.exception().code)

    assert asyncio.run(main()) == (True, False, {"answers": answer}, True, False, NOT_PENDING,
                                   ASK_ABORTED)
