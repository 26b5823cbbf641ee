"""A batch's continuation: the asker's opaque resume data, stored with the batch before it is
shown and handed back for the tool call a resumed session re-runs."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from fakes.providers import Never

from dsh_cli.agent import AgentLoop
from dsh_cli.core.events import (
    AssistantMessage,
    EventStream,
    QuestionRequested,
    QuestionResolved,
    ToolResultEvent,
    UserMessage,
)
from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import ScriptedProvider, UserInteraction
from dsh_cli.interaction.vocabulary import AskUserQuestionRequest
from dsh_cli.models.scripted import ScriptedModel
from dsh_cli.store import SessionStore
from dsh_cli.store.migrations import MIGRATIONS, migrate
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.registry import Tool, ToolContext

# a server's opaque state may hold any bytes a JSON string can: kept exactly
STATE = 'v1.AbC-_=="\\\u00e9\u2028\U0001f600 end'
CONTINUATION = {"kind": "test", "round": {"requestState": STATE, "n": [1, 2.5, None]}}
QUESTION = {"id": "name", "question": "Name?"}


@pytest.fixture
def store(tmp_path):
    with SessionStore.open(tmp_path / "sessions.db") as opened:
        yield opened


def asked(store, session_id, rpc_id, call_id, continuation):
    store.question_requested(session_id, QuestionRequested(
        rpc_id, session_id, call_id, [QUESTION], continuation=continuation))


def open_call(store, call_id="call-1"):
    session_id = store.create_session("script")
    for event in (UserMessage("go"), AssistantMessage("", [
            {"id": call_id, "name": "ask", "arguments": "{}"}])):
        store.append_message(session_id, _message(event))
    return session_id


def _message(event):
    from dsh_cli.core.conversation import message_of

    return message_of(event)


def test_the_continuation_is_kept_exactly_and_handed_back_for_the_open_call(store):
    session_id = open_call(store)
    asked(store, session_id, "q_1", "call-1", CONTINUATION)
    (batch,) = store.question_batches(session_id)
    assert batch.continuation == CONTINUATION
    assert batch.continuation["round"]["requestState"] == STATE
    assert "continuation" not in batch.request  # not part of what is shown
    record = store.load_session(session_id)
    assert record.pending_rpc_ids == {"call-1": "q_1"}
    assert record.pending_continuations == {"call-1": CONTINUATION}


def test_a_later_batch_of_the_call_carries_the_continuation_a_resume_uses(store):
    session_id = open_call(store)
    asked(store, session_id, "q_1", "call-1", {"round": 1})
    store.question_resolved(session_id, QuestionResolved("q_1", Outcome.ANSWERED, {"answers": []}))
    asked(store, session_id, "q_2", "call-1", {"round": 2})
    record = store.load_session(session_id)
    assert record.pending_rpc_ids == {"call-1": "q_2"}
    assert record.pending_continuations == {"call-1": {"round": 2}}


def test_a_re_ask_replaces_the_continuation_and_a_result_ends_it(store):
    session_id = open_call(store)
    asked(store, session_id, "q_1", "call-1", CONTINUATION)
    asked(store, session_id, "q_1", "call-1", {"round": "fresh"})  # the call started over
    assert store.question_batches(session_id)[0].continuation == {"round": "fresh"}
    asked(store, session_id, "q_1", "call-1", None)
    assert store.question_batches(session_id)[0].continuation is None
    assert store.load_session(session_id).pending_continuations == {}
    asked(store, session_id, "q_1", "call-1", CONTINUATION)
    store.append_message(session_id, _message(ToolResultEvent("call-1", "ask", "ok")))
    record = store.load_session(session_id)
    assert record.pending_rpc_ids == {} and record.pending_continuations == {}


def test_a_hand_edited_continuation_that_is_not_an_object_is_not_handed_back(store):
    session_id = open_call(store)
    asked(store, session_id, "q_1", "call-1", CONTINUATION)
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE questions SET continuation = '[not json'")
    record = store.load_session(session_id)
    assert record.pending_rpc_ids == {"call-1": "q_1"}  # still re-asked
    assert record.pending_continuations == {}


def test_a_store_from_before_continuations_gains_the_column_and_keeps_its_batches(tmp_path):
    path = tmp_path / "s.db"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, path, MIGRATIONS[:5])
    db.execute("INSERT INTO sessions VALUES ('s_old', 'm', NULL, 't', 't', NULL)")
    db.execute("INSERT INTO questions VALUES ('q_old', 's_old', 'c', '{\"questions\": []}', "
               "'pending', NULL, 't', 't', NULL)")
    db.close()
    with SessionStore.open(path) as store:
        (batch,) = store.question_batches("s_old")
    assert batch.rpc_id == "q_old" and batch.continuation is None


class Asker(Tool):
    """A tool that asks with a continuation; on resume it reports the one it was given."""

    name = "asker"

    def decode(self, arguments):
        return arguments

    def parameters(self):
        return {"type": "object"}

    async def run(self, args, ctx: ToolContext) -> str:
        if ctx.continuation is not None:
            return f"resumed {ctx.rpc_id} with {ctx.continuation['round']['requestState']}"
        request = AskUserQuestionRequest.model_validate({"questions": [QUESTION],
                                                         "call_id": ctx.call_id})
        request.continuation = CONTINUATION
        await ctx.user_interaction.ask(request, rpc_id=ctx.rpc_id)
        return "asked"


def test_the_loop_hands_a_resumed_call_its_stored_continuation(store):
    """Written as the batch is announced (before any provider shows it); after a kill the
    loaded session gives the same call its rpc_id and continuation through ToolContext."""
    turns = [{"tool_calls": [{"name": "asker", "arguments": {}}]}, {"content": "Done."}]

    def loop_for(session_id, provider, record=None):
        events = EventStream()
        ui = UserInteraction(events=events, session_id=session_id)
        ui.register_provider(provider)
        loop = AgentLoop(
            model=ScriptedModel(turns), tools=ToolRegistry([Asker()]), ui=ui, events=events,
            session_id=session_id, messages=record.messages if record else None,
            resume_rpc_ids=record.pending_rpc_ids if record else None,
            resume_continuations=record.pending_continuations if record else None)
        return loop, store.record(events, session_id)

    async def crash():
        session_id = store.create_session("script")
        provider = Never()
        loop, stop = loop_for(session_id, provider)
        task = asyncio.ensure_future(loop.run_turn("go"))
        await provider.shown.wait()
        stop()  # SIGKILL: nothing more is written
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return session_id

    async def resume(session_id):
        record = store.load_session(session_id)
        loop, stop = loop_for(session_id, ScriptedProvider([]), record)
        try:
            await loop.run_turn(None)
        finally:
            stop()
        return loop

    session_id = asyncio.run(crash())
    (batch,) = store.question_batches(session_id)
    assert batch.status == "pending" and batch.continuation == CONTINUATION
    loop = asyncio.run(resume(session_id))
    tool = next(message for message in loop.messages if message["role"] == "tool")
    assert tool["content"] == f"resumed {batch.rpc_id} with {STATE}"


def test_no_surface_sees_the_continuation():
    """The relay, the web feed and replays write ``to_json``: the state stays in the store."""
    event = QuestionRequested("q_1", "s_1", "call-1", [QUESTION], continuation=CONTINUATION)
    assert "continuation" not in event.to_json()
    assert event.to_json() == QuestionRequested("q_1", "s_1", "call-1", [QUESTION]).to_json()


def test_a_log_or_traceback_of_the_batch_does_not_print_the_state():
    event = QuestionRequested("q_1", "s_1", "call-1", [QUESTION], continuation=CONTINUATION)
    request = AskUserQuestionRequest.model_validate({"questions": [QUESTION]})
    request.continuation = CONTINUATION
    for shown in (repr(event), repr(request), str(request)):
        assert STATE not in shown
    assert "continuation=..." in repr(event)
