"""``UserInteraction``: provider lifecycle, validation order, ownership, queueing, settlement."""

from __future__ import annotations

import asyncio

import pytest

from dsh_cli.core.events import QuestionRequested, QuestionResolved
from dsh_cli.interaction import (
    ASK_ABORTED,
    ASK_CANCELLED,
    ASK_TIMEOUT,
    CALLER_NOT_LIVE,
    DELEGATED_CALLER,
    DUPLICATE_PROVIDER,
    EMPTY_QUESTIONS,
    INVALID_ANSWER,
    INVALID_QUESTIONS,
    NO_PROVIDER,
    AbortSignal,
    Agent,
    AgentRegistry,
    AskUserQuestionAnswer,
    UserInteraction,
    UserInteractionError,
)

DB = {"id": "db", "question": "Which database?", "header": "Database",
      "options": [{"label": "PostgreSQL (Recommended)", "description": "robust"},
                  {"label": "SQLite"}]}
FEATURES = {"id": "features", "question": "Which features?",
            "options": [{"label": "auth"}, {"label": "billing"}, {"label": "search"}],
            "multi_select": True}
NAME = {"id": "name", "question": "Project name?"}


def reply(*items):
    return AskUserQuestionAnswer.model_validate({"answers": list(items)})


SKIP_DB = reply({"id": "db", "selected": []})


async def until(predicate):
    """Yield to the loop until ``predicate()`` holds (the run fixture bounds the wait)."""
    while not predicate():
        await asyncio.sleep(0)


async def raises(code, awaitable):
    with pytest.raises(UserInteractionError) as caught:
        await awaitable
    assert caught.value.code == code, caught.value
    return caught.value


# -- provider registration and disposal ----------------------------------------------------


def test_no_provider(run, request_of):
    async def main():
        await raises(NO_PROVIDER, UserInteraction().ask(request_of(DB)))

    run(main())


def test_register_returns_a_disposer_and_later_asks_get_no_provider(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        provider = probe(SKIP_DB)
        dispose = ui.register_provider(provider)
        assert callable(dispose)
        await ui.ask(request_of(DB))
        dispose()
        await raises(NO_PROVIDER, ui.ask(request_of(DB)))
        assert len(provider.requests) == 1

    run(main())


def test_disposing_twice_is_harmless_and_spares_the_next_provider(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        dispose_first = ui.register_provider(probe())
        dispose_first()
        dispose_first()
        second = probe(SKIP_DB)
        ui.register_provider(second)
        dispose_first()  # a stale disposer must not remove the provider that replaced it
        await ui.ask(request_of(DB))
        assert len(second.requests) == 1

    run(main())


def test_a_second_provider_is_refused_and_the_active_one_stays(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        first, second = probe(SKIP_DB), probe(SKIP_DB)
        ui.register_provider(first)
        with pytest.raises(UserInteractionError) as caught:
            ui.register_provider(second)
        assert caught.value.code == DUPLICATE_PROVIDER
        await ui.ask(request_of(DB))
        assert (len(first.requests), len(second.requests)) == (1, 0)

    run(main())


def test_disposal_aborts_the_shown_and_the_queued_asks(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        provider = probe()
        dispose = ui.register_provider(provider)
        shown = asyncio.ensure_future(ui.ask(request_of(DB)))
        queued = asyncio.ensure_future(ui.ask(request_of(NAME)))
        await until(lambda: provider.requests)
        await asyncio.sleep(0.01)
        dispose()
        await raises(ASK_ABORTED, shown)
        await raises(ASK_ABORTED, queued)
        assert [r.questions[0].id for r in provider.requests] == ["db"]
        assert provider.cancelled == provider.requests
        assert len(ui.pending) == 0
        requested = [e for e in events if isinstance(e, QuestionRequested)]
        resolved = [e for e in events if isinstance(e, QuestionResolved)]
        assert len(requested) == 1
        assert [(e.rpc_id, e.outcome.event) for e in resolved] == [(requested[0].rpc_id, "aborted")]
        await raises(NO_PROVIDER, ui.ask(request_of(DB)))

    run(main())


# -- validation order: abort, empty, rules, ownership, provider --------------------------


def aborted_signal():
    signal = AbortSignal()
    signal.abort("turn cancelled")
    return signal


def test_an_already_aborted_ask_never_reaches_the_provider(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        provider = probe(SKIP_DB)
        ui.register_provider(provider)
        await raises(ASK_ABORTED, ui.ask(request_of(DB, signal=aborted_signal())))
        assert provider.requests == []
        assert events == []

    run(main())


def test_abort_comes_before_empty(run, request_of):
    async def main():
        await raises(ASK_ABORTED, UserInteraction().ask(request_of(signal=aborted_signal())))

    run(main())


def test_abort_comes_before_the_rules(run, request_of):
    async def main():
        request = request_of({"id": "", "question": ""}, signal=aborted_signal())
        await raises(ASK_ABORTED, UserInteraction().ask(request))

    run(main())


def test_empty_comes_before_ownership_and_provider(run, request_of):
    async def main():
        ghost = Agent("ghost")
        await raises(EMPTY_QUESTIONS, UserInteraction().ask(request_of(agent=ghost)))

    run(main())


def test_rules_come_before_ownership_and_provider(run, request_of):
    async def main():
        request = request_of({"id": "a", "question": " "}, agent=Agent("ghost"))
        await raises(INVALID_QUESTIONS, UserInteraction().ask(request))

    run(main())


def test_ownership_comes_before_provider(run, request_of):
    async def main():
        await raises(CALLER_NOT_LIVE, UserInteraction().ask(request_of(DB, agent=Agent("x"))))
        agents = AgentRegistry()
        parent = agents.spawn("main")
        child = agents.spawn("sub", parent=parent)
        ui = UserInteraction(agents=agents)
        await raises(DELEGATED_CALLER, ui.ask(request_of(DB, agent=child)))

    run(main())


# -- ownership ------------------------------------------------------------------------------


@pytest.fixture
def asked_by(run, probe, request_of):
    """``asked_by(agents, agent)``: the outcome of an ask by ``agent`` (answer or error code)."""

    def ask(agents, agent):
        async def main():
            ui = UserInteraction(agents=agents)
            provider = probe(SKIP_DB)
            ui.register_provider(provider)
            try:
                await ui.ask(request_of(DB, agent=agent))
            except UserInteractionError as error:
                assert provider.requests == []
                return error.code
            return "answered"

        return run(main())

    return ask


def test_a_live_agent_may_ask(asked_by):
    agents = AgentRegistry()
    assert asked_by(agents, agents.spawn("main")) == "answered"


def test_no_agent_given_skips_the_ownership_check(asked_by):
    assert asked_by(AgentRegistry(), None) == "answered"


def test_an_agent_never_spawned_is_not_live(asked_by):
    assert asked_by(AgentRegistry(), Agent("stranger")) == CALLER_NOT_LIVE


def test_a_retired_agent_is_not_live(asked_by):
    agents = AgentRegistry()
    agent = agents.spawn("main")
    agents.retire(agent)
    assert asked_by(agents, agent) == CALLER_NOT_LIVE


def test_an_agent_live_in_another_context_is_not_live_here(asked_by):
    elsewhere = AgentRegistry()
    assert asked_by(AgentRegistry(), elsewhere.spawn("main")) == CALLER_NOT_LIVE


def test_another_agent_object_reusing_a_live_id_is_not_live(asked_by):
    agents = AgentRegistry()
    live = agents.spawn("main")
    impostor = Agent("main", id=live.id)
    assert asked_by(agents, impostor) == CALLER_NOT_LIVE
    agents.retire(impostor)  # retiring the look-alike leaves the live agent alone
    assert asked_by(agents, live) == "answered"


def test_a_child_naming_a_look_alike_owner_may_ask(asked_by):
    agents = AgentRegistry()
    live = agents.spawn("main")
    child = agents.spawn("sub", parent=Agent("main", id=live.id))
    assert asked_by(agents, child) == "answered"  # its parent is not the live instance


def test_an_agent_owned_by_a_live_agent_is_delegated(asked_by):
    agents = AgentRegistry()
    child = agents.spawn("sub", parent=agents.spawn("main"))
    assert asked_by(agents, child) == DELEGATED_CALLER


def test_an_agent_whose_owner_retired_may_ask(asked_by):
    agents = AgentRegistry()
    parent = agents.spawn("main")
    child = agents.spawn("sub", parent=parent)
    agents.retire(parent)
    assert asked_by(agents, child) == "answered"


# -- answers through a provider ---------------------------------------------------------------


def test_a_batch_is_answered_and_normalised(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        ui.register_provider(probe(reply(
            {"id": "db", "selected": ["SQLite"]},
            {"id": "features", "selected": ["search", "auth"]},
            {"id": "name", "selected": [], "custom": "  acme  "},
        )))
        return await ui.ask(request_of(DB, FEATURES, NAME))

    assert run(main()).to_compact_json() == (
        '{"answers":[{"id":"db","selected":["SQLite"]},'
        '{"id":"features","selected":["auth","search"]},'
        '{"id":"name","selected":[],"custom":"acme"}]}'
    )


def test_a_provider_may_return_the_answer_as_json_data(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        ui.register_provider(probe({"answers": [{"id": "db", "selected": ["SQLite"]}]}))
        return await ui.ask(request_of(DB))

    assert run(main()).answers[0].selected == ["SQLite"]


def test_the_recommended_label_comes_back_unchanged(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        ui.register_provider(probe(reply({"id": "db", "selected": ["PostgreSQL (Recommended)"]})))
        return await ui.ask(request_of(DB))

    assert run(main()).answers[0].selected == ["PostgreSQL (Recommended)"]


@pytest.mark.parametrize("items", [
    [{"id": "db", "selected": ["Oracle"]}],
    [{"id": "db", "selected": ["SQLite", "PostgreSQL (Recommended)"]}],
    [{"id": "db", "selected": ["SQLite"], "custom": "x"}],
    [{"id": "db", "selected": [], "custom": "  "}],
    [{"id": "other", "selected": []}],
    [{"id": "db", "selected": []}, {"id": "db", "selected": []}],
    [],
], ids=["unknown", "two-on-single", "labels-and-custom", "blank-custom", "wrong-id", "extra",
        "missing"])
def test_a_provider_answer_that_does_not_fit_is_invalid_answer(run, probe, request_of, items):
    async def main():
        ui = UserInteraction()
        ui.register_provider(probe(reply(*items)))
        await raises(INVALID_ANSWER, ui.ask(request_of(DB)))
        assert len(ui.pending) == 0

    run(main())


def test_a_provider_cancel_is_ask_cancelled(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        ui.register_provider(probe(UserInteractionError("the user cancelled", ASK_CANCELLED)))
        await raises(ASK_CANCELLED, ui.ask(request_of(DB)))
        assert [e.outcome.event for e in events if isinstance(e, QuestionResolved)] == ["cancelled"]

    run(main())


# -- events -----------------------------------------------------------------------------------


def test_question_requested_is_emitted_before_the_provider_is_called(run, probe, request_of,
                                                                     recorded):
    async def main():
        ui = UserInteraction(session_id="s1")
        events = recorded(ui)
        registered_at_announce = []
        ui.events.subscribe(
            lambda e: registered_at_announce.append(ui.pending.get(e.rpc_id) is not None)
            if isinstance(e, QuestionRequested) else None
        )
        provider = probe(SKIP_DB, events=events)
        ui.register_provider(provider)
        await ui.ask(request_of(DB, call_id="call_1"))
        (seen,) = provider.events_seen_at_call
        assert len(seen) == 1 and isinstance(seen[0], QuestionRequested)
        assert registered_at_announce == [True]
        announced = seen[0].to_json()
        assert announced == {
            "type": "question/requested",
            "rpc_id": provider.contexts[0].rpc_id,
            "session_id": "s1",
            "call_id": "call_1",
            "questions": [{
                "id": "db", "question": "Which database?", "header": "Database",
                "options": [{"label": "PostgreSQL (Recommended)", "description": "robust"},
                            {"label": "SQLite"}],
                "multi_select": False,
            }],
        }
        assert isinstance(announced["rpc_id"], str) and announced["rpc_id"]

    run(main())


def test_question_resolved_answered_carries_the_normalised_answer(run, probe, request_of,
                                                                  recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        ui.register_provider(probe(reply({"id": "features", "selected": ["search", "auth"]})))
        await ui.ask(request_of(FEATURES))
        requested, resolved = events
        assert resolved.to_json() == {
            "type": "question/resolved",
            "rpc_id": requested.rpc_id,
            "outcome": "answered",
            "answer": {"answers": [{"id": "features", "selected": ["auth", "search"]}]},
        }

    run(main())


def test_each_ask_gets_its_own_rpc_id_unless_one_is_given(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        ui.register_provider(probe(SKIP_DB, SKIP_DB, SKIP_DB))
        await ui.ask(request_of(DB))
        await ui.ask(request_of(DB))
        await ui.ask(request_of(DB), rpc_id="q_resumed")
        return [e.rpc_id for e in events if isinstance(e, QuestionRequested)]

    first, second, third = run(main())
    assert first != second
    assert third == "q_resumed"


# -- the caller's request is only read -------------------------------------------------------


def test_one_request_object_asked_twice_gets_two_showings(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction(timeout=5)
        events = recorded(ui)
        provider = probe(SKIP_DB, SKIP_DB)
        ui.register_provider(provider)
        request = request_of(DB, call_id="call_1")
        before = (request.model_dump(), dict(vars(request)))
        first = await ui.ask(request)
        second = await ui.ask(request)
        assert (request.model_dump(), dict(vars(request))) == before
        assert provider.requests == [request, request]
        one, two = provider.contexts
        assert one.rpc_id != two.rpc_id and one.deadline is not two.deadline
        requested = [e.rpc_id for e in events if isinstance(e, QuestionRequested)]
        resolved = [e.rpc_id for e in events if isinstance(e, QuestionResolved)]
        assert requested == resolved == [one.rpc_id, two.rpc_id]
        return first, second

    first, second = run(main())
    assert first == second == SKIP_DB


def test_a_timeout_of_one_ask_does_not_follow_the_request(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        provider = probe(SKIP_DB, lambda context: asyncio.sleep(0.05, SKIP_DB))
        ui.register_provider(provider)
        request = request_of(DB)
        await ui.ask(request, timeout=0.01)
        await asyncio.sleep(0.05)  # the first ask's deadline is now long past
        answer = await ui.ask(request)  # no timeout applies to this one
        assert [c.deadline is None for c in provider.contexts] == [False, True]
        return answer

    assert run(main()) == SKIP_DB


def test_one_request_object_queued_twice_is_shown_twice_in_turn(run, probe, request_of,
                                                                  recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        gates = [asyncio.get_running_loop().create_future() for _ in range(2)]
        provider = probe(*gates)
        ui.register_provider(provider)
        request = request_of(DB)
        asks = [asyncio.ensure_future(ui.ask(request)) for _ in range(2)]
        await until(lambda: provider.requests)
        await asyncio.sleep(0.01)
        assert len(provider.requests) == 1 and len(ui.pending) == 1
        gates[0].set_result(SKIP_DB)
        gates[1].set_result(reply({"id": "db", "selected": ["SQLite"]}))
        first, second = await asyncio.gather(*asks)
        assert first == SKIP_DB and second.answers[0].selected == ["SQLite"]
        assert provider.max_showing == 1 and provider.requests == [request, request]
        ids = [c.rpc_id for c in provider.contexts]
        assert len(set(ids)) == 2
        assert [e.rpc_id for e in events if isinstance(e, QuestionRequested)] == ids

    run(main())


def test_a_given_rpc_id_is_used_for_that_ask_only(run, probe, request_of):
    async def main():
        ui = UserInteraction(session_id="s1")
        provider = probe(SKIP_DB, SKIP_DB)
        ui.register_provider(provider)
        request = request_of(DB)
        await ui.ask(request, rpc_id="q_resumed")
        await ui.ask(request)
        return [(c.rpc_id, c.session_id) for c in provider.contexts]

    (resumed, resumed_session), (fresh, fresh_session) = run(main())
    assert resumed == "q_resumed" and fresh not in ("q_resumed", None)
    assert resumed_session == fresh_session == "s1"


# -- queueing, abort and timeout ------------------------------------------------------------


def test_requests_are_shown_one_at_a_time_first_in_first_out(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        gates = [asyncio.get_running_loop().create_future() for _ in range(3)]
        provider = probe(*gates)
        ui.register_provider(provider)
        ids = ["a", "b", "c"]
        asks = [asyncio.ensure_future(ui.ask(request_of({"id": i, "question": i}))) for i in ids]
        await until(lambda: provider.requests)
        await asyncio.sleep(0.01)
        assert len(provider.requests) == 1
        for gate, ask_id in reversed(list(zip(gates, ids, strict=True))):
            gate.set_result(reply({"id": ask_id, "selected": [], "custom": ask_id.upper()}))
        results = await asyncio.gather(*asks)
        assert [r.questions[0].id for r in provider.requests] == ids
        assert provider.max_showing == 1
        assert [r.answers[0].custom for r in results] == ["A", "B", "C"]

    run(main())


def test_a_concurrent_provider_gets_every_batch_at_once(run, probe, request_of, recorded):
    """A provider that lists every pending batch (``concurrent = True``) takes no turns:
    both batches are shown and pending together, and the second may be answered first."""
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        gates = [asyncio.get_running_loop().create_future() for _ in range(2)]
        provider = probe(*gates)
        provider.concurrent = True
        ui.register_provider(provider)
        asks = [asyncio.ensure_future(ui.ask(request_of({"id": i, "question": i})))
                for i in ("a", "b")]
        await until(lambda: len(provider.requests) == 2)
        assert provider.showing == 2 and len(ui.pending) == 2
        gates[1].set_result(reply({"id": "b", "selected": [], "custom": "B"}))
        second = await asks[1]
        assert second.answers[0].custom == "B" and not asks[0].done()
        gates[0].set_result(reply({"id": "a", "selected": [], "custom": "A"}))
        assert (await asks[0]).answers[0].custom == "A"
        resolved = [e.rpc_id for e in events if isinstance(e, QuestionResolved)]
        assert resolved == [provider.contexts[1].rpc_id, provider.contexts[0].rpc_id]

    run(main())


def test_a_provider_that_is_not_concurrent_still_takes_turns(run, probe, request_of):
    """Only ``concurrent = True`` opts out of the queue (a truthy non-bool does not)."""
    async def main():
        ui = UserInteraction()
        gates = [asyncio.get_running_loop().create_future() for _ in range(2)]
        provider = probe(*gates)
        provider.concurrent = "yes"
        ui.register_provider(provider)
        asks = [asyncio.ensure_future(ui.ask(request_of({"id": i, "question": i})))
                for i in ("a", "b")]
        await until(lambda: provider.requests)
        await asyncio.sleep(0.01)
        assert len(provider.requests) == 1 and len(ui.pending) == 1
        gates[0].set_result(reply({"id": "a", "selected": [], "custom": "A"}))
        gates[1].set_result(reply({"id": "b", "selected": [], "custom": "B"}))
        await asyncio.gather(*asks)
        assert provider.max_showing == 1

    run(main())


def test_a_concurrent_provider_still_times_out_aborts_and_records(run, probe, request_of,
                                                                  recorded):
    """Without the queue the rest is as it was: a timeout, an abort, the announcement's
    delivery, the resolution events."""
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        provider = probe()  # hangs
        provider.concurrent = True
        ui.register_provider(provider)
        signal = AbortSignal()
        late = asyncio.ensure_future(ui.ask(request_of(DB), timeout=0.05, delivery="async"))
        held = asyncio.ensure_future(ui.ask(request_of(NAME, signal=signal)))
        await until(lambda: len(provider.requests) == 2)
        signal.abort("gone")
        await raises(ASK_ABORTED, held)
        await raises(ASK_TIMEOUT, late)
        requested = [e for e in events if isinstance(e, QuestionRequested)]
        assert [e.delivery for e in requested] == ["async", "wait"]
        outcomes = {e.rpc_id: e.outcome.event for e in events if isinstance(e, QuestionResolved)}
        assert sorted(outcomes.values()) == ["aborted", "timeout"]
        assert len(ui.pending) == 0

    run(main())


def test_aborting_a_queued_request_removes_it_unshown(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        gate = asyncio.get_running_loop().create_future()
        provider = probe(gate, reply({"id": "name", "selected": [], "custom": "acme"}))
        ui.register_provider(provider)
        signal = AbortSignal()
        shown = asyncio.ensure_future(ui.ask(request_of(DB)))
        queued = asyncio.ensure_future(ui.ask(request_of(FEATURES, signal=signal)))
        after = asyncio.ensure_future(ui.ask(request_of(NAME)))
        await until(lambda: provider.requests)
        await asyncio.sleep(0.01)
        signal.abort("turn cancelled")
        await raises(ASK_ABORTED, queued)
        gate.set_result(SKIP_DB)
        await shown
        assert (await after).answers[0].custom == "acme"
        assert [r.questions[0].id for r in provider.requests] == ["db", "name"]
        requested = [e for e in events if isinstance(e, QuestionRequested)]
        assert [e.questions[0]["id"] for e in requested] == ["db", "name"]

    run(main())


def test_abort_while_shown_cancels_the_provider(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        provider = probe()
        ui.register_provider(provider)
        signal = AbortSignal()
        ask = asyncio.ensure_future(ui.ask(request_of(DB, signal=signal)))
        await until(lambda: provider.requests)
        signal.abort("turn cancelled")
        await raises(ASK_ABORTED, ask)
        assert provider.cancelled == provider.requests
        assert len(ui.pending) == 0
        assert [e.outcome.event for e in events if isinstance(e, QuestionResolved)] == ["aborted"]

    run(main())


def test_cancelling_the_ask_task_closes_the_provider(run, probe, request_of, recorded):
    async def main():
        ui = UserInteraction()
        events = recorded(ui)
        provider = probe()
        ui.register_provider(provider)
        ask = asyncio.ensure_future(ui.ask(request_of(DB)))
        await until(lambda: provider.requests)
        ask.cancel()
        with pytest.raises(asyncio.CancelledError):
            await ask
        assert provider.cancelled == provider.requests
        assert len(ui.pending) == 0
        assert [e.outcome.event for e in events if isinstance(e, QuestionResolved)] == ["aborted"]

    run(main())


def test_a_question_timeout_is_ask_timeout_and_closes_the_provider(run, probe, request_of,
                                                                   recorded):
    async def main():
        ui = UserInteraction(timeout=0.05)
        events = recorded(ui)
        provider = probe()
        ui.register_provider(provider)
        await raises(ASK_TIMEOUT, ui.ask(request_of(DB)))
        assert provider.cancelled == provider.requests
        assert provider.contexts[0].deadline is not None
        assert len(ui.pending) == 0
        assert [e.outcome.event for e in events if isinstance(e, QuestionResolved)] == ["timeout"]

    run(main())


def test_stopping_the_deadline_stops_the_timeout(run, probe, request_of):
    async def engaged(context):
        context.deadline.stop()  # the human pressed a key: the countdown ends
        await asyncio.sleep(0.2)
        return SKIP_DB

    async def main():
        ui = UserInteraction(timeout=0.05)
        provider = probe(engaged)
        ui.register_provider(provider)
        answer = await ui.ask(request_of(DB))
        assert provider.contexts[0].deadline.stopped
        assert provider.cancelled == []
        return answer

    assert run(main()).answers[0].skipped


def test_no_timeout_configured_means_no_deadline(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        provider = probe(SKIP_DB)
        ui.register_provider(provider)
        await ui.ask(request_of(DB))
        assert provider.contexts[0].deadline is None

    run(main())


def test_a_crashing_provider_does_not_leave_the_batch_pending(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        ui.register_provider(probe(RuntimeError("terminal went away"), SKIP_DB))
        with pytest.raises(UserInteractionError):
            await ui.ask(request_of(DB))
        assert len(ui.pending) == 0
        assert (await ui.ask(request_of(DB))).answers[0].skipped

    run(main())


def test_cancelling_asks_never_stalls_the_queue(run, probe, request_of):
    async def main():
        ui = UserInteraction()
        never = asyncio.get_running_loop().create_future()
        provider = probe(never, reply({"id": "name", "selected": []}))
        ui.register_provider(provider)
        shown = asyncio.ensure_future(ui.ask(request_of(DB)))
        queued = asyncio.ensure_future(ui.ask(request_of(FEATURES)))
        last = asyncio.ensure_future(ui.ask(request_of(NAME)))
        await until(lambda: provider.requests)
        await asyncio.sleep(0.01)
        queued.cancel()  # a queued ask whose task is cancelled leaves the queue unshown
        await asyncio.sleep(0.01)
        shown.cancel()  # the ask on screen is cancelled: the next one takes the screen
        assert (await last).answers[0].skipped
        assert [r.questions[0].id for r in provider.requests] == ["db", "name"]
        assert queued.cancelled() and shown.cancelled()
        assert len(ui.pending) == 0

    run(main())
