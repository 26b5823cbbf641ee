"""Recording the event stream, loading it back for the model, resuming open questions."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from fakes.providers import Never
from harness.conversation import assert_well_formed

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
from dsh_cli.models.scripted import ScriptedModel
from dsh_cli.store import SESSION_NOT_FOUND, SessionNotFound, SessionStore, assistant_message
from dsh_cli.tools import AskUserQuestionTool, ToolRegistry

DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
ASK = {"name": "ask_user_question", "arguments": {"questions": [DB]}}
TURNS = [{"content": "Let me ask.", "tool_calls": [ASK]}, {"content": "Done."}]
SQLITE = {"answers": [{"id": "db", "selected": ["SQLite"]}]}


@pytest.fixture
def store(tmp_path):
    with SessionStore.open(tmp_path / "sessions.db") as opened:
        yield opened


def make_loop(store, session_id, provider, *, messages=None, system=None, turns=TURNS,
              resume_rpc_ids=None):
    events = EventStream()
    ui = UserInteraction(events=events, session_id=session_id)
    ui.register_provider(provider)
    loop = AgentLoop(model=ScriptedModel(turns), tools=ToolRegistry([AskUserQuestionTool()]),
                     ui=ui, events=events, system=system, messages=messages,
                     session_id=session_id, resume_rpc_ids=resume_rpc_ids)
    return loop, store.record(events, session_id)


def test_stored_messages_are_exactly_what_the_loop_keeps(store):
    session_id = store.create_session("script", system="Be brief.")
    loop, _ = make_loop(store, session_id, ScriptedProvider([SQLITE]), system="Be brief.")
    assert asyncio.run(loop.run_turn("pick a database")) == "Done."
    record = store.load_session(session_id)
    assert record.messages == loop.messages
    assert record.messages[0] == {"role": "system", "content": "Be brief."}
    assert record.system == "Be brief."
    assert record.title == "pick a database"
    assert record.pending_rpc_ids == {}
    assert_well_formed(record.messages)
    [batch] = store.question_batches(session_id)
    assert batch.status == "answered" and batch.answer == SQLITE
    [question] = batch.request["questions"]
    assert (question["id"], question["question"]) == ("db", "Which database?")
    assert [option["label"] for option in question["options"]] == ["PostgreSQL", "SQLite"]
    assert batch.call_id == record.messages[2]["tool_calls"][0]["id"]
    assert batch.resolved_at is not None


def test_assistant_event_becomes_the_openai_message():
    event = AssistantMessage("hi", [{"id": "c1", "name": "f", "arguments": '{"a": 1}'}])
    assert assistant_message(event) == {
        "role": "assistant", "content": "hi",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "f", "arguments": '{"a": 1}'}}],
    }
    assert assistant_message(AssistantMessage("plain")) == {"role": "assistant",
                                                             "content": "plain"}


def test_each_event_is_on_disk_before_the_next(store, tmp_path):
    session_id = store.create_session("script")
    events = EventStream()
    store.record(events, session_id)
    other = SessionStore.open(tmp_path / "sessions.db")  # another process's view
    events.emit(UserMessage("one"))
    assert len(other.load_session(session_id).messages) == 1
    events.emit(AssistantMessage("", [{"id": "c1", "name": "ask_user_question",
                                       "arguments": "{}"}]))
    events.emit(QuestionRequested("q_1", session_id, "c1", [DB]))
    assert other.question_batches(session_id)[0].status == "pending"
    assert other.load_session(session_id).pending_rpc_ids == {"c1": "q_1"}
    events.emit(QuestionResolved("q_1", Outcome.CANCELLED))
    assert other.question_batches(session_id)[0].status == "cancelled"
    events.emit(ToolResultEvent("c1", "ask_user_question", "cancelled", {"code": "X"}))
    assert other.load_session(session_id).messages[-1] == {
        "role": "tool", "tool_call_id": "c1", "content": "cancelled"}
    other.close()


def test_unsubscribe_stops_recording(store):
    session_id = store.create_session("script")
    events = EventStream()
    stop = store.record(events, session_id)
    events.emit(UserMessage("kept"))
    stop()
    events.emit(UserMessage("not kept"))
    assert [m["content"] for m in store.load_session(session_id).messages] == ["kept"]


def test_recording_an_unknown_session_fails_at_once(store):
    with pytest.raises(SessionNotFound) as caught:
        store.record(EventStream(), "s_nope")
    assert caught.value.code == SESSION_NOT_FOUND


async def _interrupted_then_resumed(store):
    """Ask, die while the question is shown, resume in a new loop, answer."""
    session_id = store.create_session("script")
    provider = Never()
    loop, _ = make_loop(store, session_id, provider)
    task = asyncio.ensure_future(loop.run_turn("go"))
    await provider.shown.wait()
    assert store.mark_interrupted(session_id) == 1  # SIGTERM: saved before the process ends
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [batch] = store.question_batches(session_id)
    record = store.load_session(session_id)
    assert batch.status == "interrupted"
    assert [m["role"] for m in record.messages] == ["user", "assistant"]  # no abort result
    assert record.pending_rpc_ids == {batch.call_id: batch.rpc_id}

    answering = ScriptedProvider([SQLITE])
    resumed, _ = make_loop(store, session_id, answering, messages=record.messages,
                           resume_rpc_ids=record.pending_rpc_ids)
    final = await resumed.run_turn(None)
    return session_id, batch, answering, resumed, final


def test_interrupted_question_is_asked_again_under_its_rpc_id(store):
    session_id, batch, answering, loop, final = asyncio.run(_interrupted_then_resumed(store))
    assert final == "Done."
    assert answering.contexts[0].rpc_id == batch.rpc_id
    batches = store.question_batches(session_id)
    assert len(batches) == 1  # the same row, updated
    assert batches[0].rpc_id == batch.rpc_id and batches[0].status == "answered"
    assert batches[0].answer == SQLITE and batches[0].created_at == batch.created_at
    record = store.load_session(session_id)
    assert record.messages == loop.messages
    assert record.pending_rpc_ids == {}
    assert_well_formed(record.messages)
    assert json.loads(record.messages[2]["content"]) == SQLITE


def test_a_killed_process_leaves_the_batch_pending_and_resumable(store):
    async def crash():
        session_id = store.create_session("script")
        provider = Never()
        loop, stop = make_loop(store, session_id, provider)
        task = asyncio.ensure_future(loop.run_turn("go"))
        await provider.shown.wait()
        stop()  # SIGKILL: nothing more is written, not even the abort
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return session_id

    session_id = asyncio.run(crash())
    [batch] = store.question_batches(session_id)
    assert batch.status == "pending"
    assert store.load_session(session_id).pending_rpc_ids == {batch.call_id: batch.rpc_id}


def test_a_batch_with_a_result_is_not_resumable(store):
    session_id = store.create_session("script")
    events = EventStream()
    store.record(events, session_id)
    events.emit(AssistantMessage("", [{"id": "c1", "name": "ask_user_question",
                                       "arguments": "{}"}]))
    events.emit(QuestionRequested("q_1", None, "c1", [DB]))
    events.emit(ToolResultEvent("c1", "ask_user_question", "{}"))
    assert store.load_session(session_id).pending_rpc_ids == {}


def test_a_batch_aborted_without_a_result_is_still_resumable(store):
    """The dying process settled it (aborted) but never recorded the tool result."""
    session_id = store.create_session("script")
    events = EventStream()
    store.record(events, session_id)
    events.emit(AssistantMessage("", [{"id": "c1", "name": "ask_user_question",
                                       "arguments": "{}"}]))
    events.emit(QuestionRequested("q_1", None, "c1", [DB]))
    events.emit(QuestionResolved("q_1", Outcome.ABORTED))
    assert store.question_batches(session_id)[0].status == "aborted"
    assert store.load_session(session_id).pending_rpc_ids == {"c1": "q_1"}


def test_interrupted_batch_ignores_a_late_resolution(store):
    session_id = store.create_session("script")
    events = EventStream()
    store.record(events, session_id)
    events.emit(QuestionRequested("q_1", None, "c1", [DB]))
    store.mark_interrupted(session_id)
    events.emit(QuestionResolved("q_1", Outcome.ABORTED))
    store.question_resolved(session_id, QuestionResolved("q_1", Outcome.ABORTED))
    assert store.question_batches(session_id)[0].status == "interrupted"
    assert store.mark_interrupted(session_id) == 0


def test_mark_interrupted_touches_only_that_session(store):
    first, second = store.create_session("a"), store.create_session("b")
    for session_id, rpc_id in ((first, "q_a"), (second, "q_b")):
        store.question_requested(session_id, QuestionRequested(rpc_id, None, "c", [DB]))
    assert store.mark_interrupted(first) == 1
    assert store.question_batches(first)[0].status == "interrupted"
    assert store.question_batches(second)[0].status == "pending"


def test_ids_prefixes_and_listing(store):
    first = store.create_session("model-a")
    second = store.create_session("model-b")
    assert first.startswith("s_") and first != second
    assert store.latest_session_id() == second
    store.append_message(first, {"role": "user", "content": "later"})
    assert store.latest_session_id() == first
    assert [s.id for s in store.list_sessions()] == [first, second]
    assert store.load_session(first[:-1]).id == first
    assert store.resolve_id(first) == first
    assert store.resolve_id(first[2:]) == first  # without the s_
    with pytest.raises(SessionNotFound, match="ambiguous"):
        store.resolve_id("s_")
    with pytest.raises(SessionNotFound, match="does not exist"):
        store.load_session("zzz")
    summary = store.list_sessions()[0].to_json()
    assert summary == {"id": first, "created_at": summary["created_at"],
                       "updated_at": summary["updated_at"], "model": "model-a",
                       "title": "later", "kind": "chat", "agent": None, "cwd": None}
    assert summary["updated_at"].endswith("Z") and summary["created_at"] <= summary["updated_at"]


def test_latest_of_an_empty_store_is_none(store):
    assert store.latest_session_id() is None
    assert store.list_sessions() == []


def test_delete_removes_messages_and_questions(store, tmp_path):
    keep = store.create_session("a")
    gone = store.create_session("b")
    for session_id in (keep, gone):
        store.append_message(session_id, {"role": "user", "content": "hi"})
        store.question_requested(session_id, QuestionRequested(f"q_{session_id}", None, "c",
                                                               [DB]))
    store.delete_session(gone)
    with pytest.raises(SessionNotFound):
        store.load_session(gone)
    with pytest.raises(SessionNotFound):
        store.delete_session(gone)
    assert store.question_batches(gone) == []
    assert len(store.load_session(keep).messages) == 1
    counts = store._db.execute("SELECT (SELECT count(*) FROM messages), "
                               "(SELECT count(*) FROM questions)").fetchone()
    assert counts == (1, 1)


def test_title_is_the_first_user_message(store):
    session_id = store.create_session("a")
    store.append_message(session_id, {"role": "assistant", "content": "hello"})
    store.append_message(session_id, {"role": "user", "content": "first\nline " + "x" * 80})
    store.append_message(session_id, {"role": "user", "content": "second"})
    title = store.load_session(session_id).title
    assert title.startswith("first line x") and len(title) == 60 and "\n" not in title


def test_api_keys_are_never_stored(tmp_path, monkeypatch, dsh_home):
    secret = "sk-test-9f8e7d6c5b4a39281706"
    monkeypatch.setenv("DSH_API_KEY", secret)
    from dsh_cli.config import load_settings

    settings = load_settings(model="deepseek-chat")
    assert settings.api_key == secret
    with SessionStore.open() as store:
        session_id = store.create_session(settings.model, system="sys")
        loop, _ = make_loop(store, session_id, ScriptedProvider([SQLITE]))
        asyncio.run(loop.run_turn("hello"))
        store.mark_interrupted(session_id)
    files = [path for path in dsh_home.iterdir() if path.name.startswith("sessions.db")]
    assert files
    for path in files:
        assert secret.encode() not in path.read_bytes()


def test_public_surface():
    import dsh_cli.store as package

    assert sorted(package.__all__) == sorted([
        "SESSION_NOT_FOUND", "STORE_ERROR", "QuestionBatch", "SessionNotFound",
        "SessionRecord", "SessionStore", "SessionSummary", "StoreError", "assistant_message",
    ])
    assert all(hasattr(package, name) for name in package.__all__)


def test_an_async_batch_is_one_row_open_until_its_outcome_is_delivered(tmp_path):
    """Asked async, settled, asked again while undelivered (its outcome kept), delivered
    with the message that carries it (no longer resumed), then asked async once more (open
    again, no outcome): all in the batch's own ``questions`` row."""
    def ask(delivery: str) -> None:
        store.question_requested(session_id, QuestionRequested(
            "q_1", session_id, "call-1", [{"id": "a", "question": "A?"}], delivery=delivery))

    def resumed() -> list[tuple]:
        return [(row["ticket"], row["outcome"] and row["outcome"]["outcome"])
                for row in store.load_session(session_id).later]

    with SessionStore.open(tmp_path / "sessions.db") as store:
        session_id = store.create_session("script")
        ask("async")
        assert resumed() == [("q_1", None)]
        store.question_resolved(session_id, QuestionResolved(
            "q_1", Outcome.ANSWERED, {"answers": [{"id": "a", "text": "yes"}]}))
        ask("async")
        assert resumed() == [("q_1", "answered")]
        store.append_message(session_id, {"role": "user", "content": "q_1: yes"},
                             ticket="q_1")
        assert resumed() == []
        ask("async")
        assert resumed() == [("q_1", None)]
        with sqlite3.connect(store.path) as db:
            assert db.execute("SELECT count(*), delivery, delivered_at, async_outcome "
                              "FROM questions").fetchone() == (1, "async", None, None)
            assert db.execute("SELECT count(*) FROM sqlite_master "
                              "WHERE name = 'later_questions'").fetchone() == (0,)
