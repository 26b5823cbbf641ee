"""A conversation's messages read once: the events, tool calls and pending calls of it."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import subprocess
from types import SimpleNamespace

from harness.dsh_under_test import DSH
from harness.hardening_strategies import ANY_JSON
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_cli.agent import AgentLoop
from dsh_cli.cli.sessions import transcript
from dsh_cli.core.conversation import (
    ToolCall,
    answered_call_ids,
    conversation_events,
    message_of,
    pending_tool_calls,
    text_of,
    tool_calls_by_id,
    tool_calls_of,
)
from dsh_cli.core.events import (
    AssistantMessage,
    EventStream,
    ToolResultEvent,
    ToolStarted,
    UserMessage,
)
from dsh_cli.interaction import PendingQuestions, ScriptedProvider, UserInteraction
from dsh_cli.models.scripted import ScriptedModel
from dsh_cli.providers.web.feed import EventFeed
from dsh_cli.store import SessionStore
from dsh_cli.tools import AskUserQuestionTool, ToolRegistry
from dsh_cli.transcript import TranscriptRenderer

FAILURE = json.dumps({"error": {"name": "ToolError", "code": "UNKNOWN_TOOL", "message": "m"}})
ANSWERED = json.dumps({"answers": [{"id": "db", "selected": ["SQLite"]}]})


def call(call_id, name, arguments="{}"):
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def result(call_id, content):
    return {"role": "tool", "tool_call_id": call_id, "content": content}


CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "set it up"},
    {"role": "assistant", "content": "Asking.",
     "tool_calls": [call("c1", "ask_user_question"), call("c2", "nope", '{"x": 1}')]},
    result("c1", ANSWERED),
    result("c2", FAILURE),
    {"role": "assistant", "content": "Done."},
]


def record_of(messages, *, system=None):
    """What ``SessionStore.load_session`` returns, for ``dsh sessions show``'s transcript."""
    return SimpleNamespace(id="s_1", model="m", created_at="2024-01-01T00:00:00Z",
                           updated_at="2024-01-01T00:00:00Z", title=None, messages=messages,
                           system=system, pending_rpc_ids={})


def replayed(messages, **options):
    stream = io.StringIO()
    TranscriptRenderer(stream, color=False).replay(messages, **options)
    return stream.getvalue().splitlines()


def fed(messages):
    feed = EventFeed(PendingQuestions())
    feed.show_messages(messages)
    return feed.history


def test_calls_with_results_are_the_events_a_live_session_emits():
    assert list(conversation_events(CONVERSATION)) == [
        UserMessage("set it up"),
        AssistantMessage("Asking.", [{"id": "c1", "name": "ask_user_question", "arguments": "{}"},
                                     {"id": "c2", "name": "nope", "arguments": '{"x": 1}'}]),
        ToolStarted("c1", "ask_user_question", "{}"),
        ToolResultEvent("c1", "ask_user_question", ANSWERED, None),
        ToolStarted("c2", "nope", '{"x": 1}'),
        ToolResultEvent("c2", "nope", FAILURE,
                        {"name": "ToolError", "code": "UNKNOWN_TOOL", "message": "m"}),
        AssistantMessage("Done.", []),
    ]
    assert pending_tool_calls(CONVERSATION) == []
    assert answered_call_ids(CONVERSATION) == {"c1", "c2"}


def test_a_call_without_a_result_is_started_and_pending():
    messages = [*CONVERSATION[:4]]  # c2 has no result: the process died while it ran
    events = list(conversation_events(messages))
    # started like the live one: c1 started and finished, then c2 started and never ended
    assert [type(e).__name__ for e in events] == [
        "UserMessage", "AssistantMessage", "ToolStarted", "ToolResultEvent", "ToolStarted"]
    assert events[-1] == ToolStarted("c2", "nope", '{"x": 1}')
    assert pending_tool_calls(messages) == [ToolCall("c2", "nope", '{"x": 1}')]
    assert answered_call_ids(messages) == {"c1"}
    assert pending_tool_calls(CONVERSATION[:3]) == [ToolCall("c1", "ask_user_question", "{}"),
                                                    ToolCall("c2", "nope", '{"x": 1}')]
    # only the last assistant message counts, and a user message after it closes it
    assert pending_tool_calls([*CONVERSATION[:3], {"role": "user", "content": "and?"}]) == []
    assert pending_tool_calls([]) == []


def test_a_result_whose_call_id_is_unknown_has_no_name_and_each_consumer_says_so():
    messages = [{"role": "user", "content": "hi"}, result("zz", "stray")]
    assert list(conversation_events(messages))[-1] == ToolResultEvent("zz", "", "stray", None)
    assert replayed(messages) == ["› hi", "· tool → stray"]
    assert fed(messages)[-1]["name"] == ""
    assert "tool result (zz):" in transcript(record_of(messages), [])


def test_the_call_map_covers_the_whole_conversation_and_the_first_of_an_id_wins():
    messages = [
        result("c1", "early"),  # a result stored before its call still finds its name
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "first")]},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "second")]},
        {"role": "user", "content": "", "tool_calls": [call("c9", "not an assistant's")]},
    ]
    assert tool_calls_by_id(messages) == {"c1": ToolCall("c1", "first", "{}")}
    assert next(conversation_events(messages)) == ToolResultEvent("c1", "first", "early")


def test_last_keeps_the_last_messages_but_names_results_from_the_whole_conversation():
    events = list(conversation_events(CONVERSATION, last=2))
    assert events == [ToolResultEvent("c2", "nope", FAILURE, json.loads(FAILURE)["error"]),
                      AssistantMessage("Done.", [])]
    assert list(conversation_events(CONVERSATION, last=0)) == []
    assert replayed(CONVERSATION, last=2) == ["· nope ✗ UNKNOWN_TOOL", "Done."]


def test_malformed_messages_from_an_old_or_hand_edited_store_are_read_not_raised():
    messages = [
        "not a message", None, 7, {"content": "no role"}, {"role": ["odd"]},
        {"role": "user", "content": 42},
        {"role": "user", "content": [{"type": "text", "text": "part one, "}, "part two"]},
        {"role": "user", "content": {"a": 1}},
        {"role": "user"},
        {"role": "assistant", "content": None, "tool_calls": "not a list"},
        {"role": "assistant", "content": b"bytes\xff", "tool_calls": [
            "not a call", None,
            {"id": 5, "function": "not a mapping"},
            {"function": {"name": None, "arguments": {"already": "parsed"}}},
            {"id": "c3", "function": {"name": "ok"}},
        ]},
        {"role": "tool", "content": "no call id"},
        {"role": "tool", "tool_call_id": "c3", "content": ["not", 1, "text"]},
        {"role": "tool", "tool_call_id": "c3", "content": '{"error": "a string, not an error"}'},
        {"role": "tool", "tool_call_id": "c3", "content": "[" * 100_000},
    ]
    assert [text_of(m.get("content")) for m in messages[5:9]] == [
        "42", "part one, part two", '{"a": 1}', ""]
    assert tool_calls_of(messages[9]) == []
    assert tool_calls_of(messages[10]) == [
        ToolCall("5", "", ""), ToolCall("", "", '{"already": "parsed"}'), ToolCall("c3", "ok", "")]
    parsed = '{"already": "parsed"}'
    events = list(conversation_events(messages))
    assert events[4:] == [
        AssistantMessage("", []),
        AssistantMessage("bytes\ufffd", [{"id": "5", "name": "", "arguments": ""},
                                         {"id": "", "name": "", "arguments": parsed},
                                         {"id": "c3", "name": "ok", "arguments": ""}]),
        ToolStarted("5", "", ""), ToolStarted("", "", parsed),
        ToolResultEvent("", "", "no call id"),  # the result of the call without an id
        ToolStarted("c3", "ok", ""),
        ToolResultEvent("c3", "ok", '["not", 1, "text"]'),
        ToolResultEvent("c3", "ok", '{"error": "a string, not an error"}', None),
        ToolResultEvent("c3", "ok", "[" * 100_000, None),
    ]
    assert pending_tool_calls(messages) == [ToolCall("5", "", "")]
    assert replayed(messages)[-4:-1] == ["· tool → no call id", '· ok → ["not", 1, "text"]',
                                         '· ok → {"error": "a string, not an error"}']
    assert "  -> ok " in transcript(record_of(messages), [])


MESSAGE_LIKE = st.fixed_dictionaries(
    {"role": st.one_of(st.sampled_from(["user", "assistant", "tool", "system"]), ANY_JSON)},
    optional={
        "content": ANY_JSON,
        "tool_call_id": ANY_JSON,
        "tool_calls": st.one_of(ANY_JSON, st.lists(st.one_of(ANY_JSON, st.fixed_dictionaries(
            {}, optional={"id": ANY_JSON, "function": st.one_of(ANY_JSON, st.fixed_dictionaries(
                {}, optional={"name": ANY_JSON, "arguments": ANY_JSON}))})), max_size=3)),
    },
)


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.one_of(MESSAGE_LIKE, ANY_JSON), max_size=8))
def test_any_json_shaped_conversation_is_read_by_every_consumer(messages):
    events = list(conversation_events(messages))
    for event in events:
        fields = [event.content] if isinstance(event, UserMessage) else []
        if isinstance(event, AssistantMessage):
            fields = [event.content, *(v for c in event.tool_calls for v in c.values())]
        elif isinstance(event, ToolStarted | ToolResultEvent):
            fields = [getattr(event, name) for name in ("call_id", "name")]
        assert all(isinstance(value, str) for value in fields), event
    assert set(tool_calls_by_id(messages)) >= {c.id for c in pending_tool_calls(messages)}
    replayed(messages)
    json.dumps(fed(messages))  # the browser gets it as JSON
    transcript(record_of(messages, system="s"), [])


@settings(max_examples=100, deadline=None, database=None)
@given(st.lists(st.one_of(
    st.text(max_size=5).map(UserMessage),
    st.tuples(st.text(max_size=5), st.lists(st.tuples(st.text(max_size=3), st.text(max_size=3)),
                                            max_size=2)),
    st.tuples(st.text(max_size=5)),
), max_size=6))
def test_message_of_is_the_inverse_of_conversation_events(plan):
    """What the loop keeps (and the store writes) for events reads back as those events."""
    live = []
    for n, step in enumerate(plan):
        if isinstance(step, UserMessage):
            live.append(step)
        elif len(step) == 2:
            content, calls = step
            own = [{"id": f"c{n}_{i}", "name": name, "arguments": args}
                   for i, (name, args) in enumerate(calls)]
            live.append(AssistantMessage(content, own))
            for c in own:
                live.append(ToolStarted(c["id"], c["name"], c["arguments"]))
                live.append(ToolResultEvent(c["id"], c["name"], f"result of {c['id']}"))
        else:
            live.append(AssistantMessage(step[0], []))
    messages = [m for m in map(message_of, live) if m is not None]
    assert list(conversation_events(messages)) == live
    assert message_of(ToolStarted("c", "n", "{}")) is None


def test_the_three_consumers_agree_on_one_conversation(tmp_path):
    """A live session and its stored copy: replay, web feed and sessions show read it alike."""
    ask = {"name": "ask_user_question", "arguments": {"questions": [
        {"id": "db", "question": "Which database?",
         "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}}
    turns = [{"content": "Let me ask.", "tool_calls": [ask, {"name": "nope", "arguments": {}}]},
             {"content": "Done."}]
    with SessionStore.open(tmp_path / "sessions.db") as store:
        session_id = store.create_session("script", system="Be brief.")
        events = EventStream()
        ui = UserInteraction(events=events, session_id=session_id)
        ui.register_provider(ScriptedProvider([{"answers": [{"id": "db",
                                                             "selected": ["SQLite"]}]}]))
        loop = AgentLoop(model=ScriptedModel(turns), tools=ToolRegistry([AskUserQuestionTool()]),
                         ui=ui, events=events, system="Be brief.", session_id=session_id)
        store.record(events, session_id)
        seen, screen = [], io.StringIO()
        live_feed = EventFeed(PendingQuestions())
        live_feed.attach(events.subscribe)
        events.subscribe(seen.append)
        events.subscribe(TranscriptRenderer(screen, color=False))
        assert asyncio.run(loop.run_turn("pick a database")) == "Done."
        record = store.load_session(session_id)
        batches = store.question_batches(session_id)

    kinds = (UserMessage, AssistantMessage, ToolStarted, ToolResultEvent)
    live = [event for event in seen if isinstance(event, kinds)]
    assert record.messages == loop.messages
    assert list(conversation_events(record.messages)) == live
    results = [event for event in live if isinstance(event, ToolResultEvent)]
    assert [(e.name, bool(e.error)) for e in results] == [("ask_user_question", False),
                                                        ("nope", True)]

    # the web feed: a reloaded session's transcript is the one the live page was sent
    transcript_kinds = {"user/message", "assistant/message", "tool/started", "tool/result"}
    assert fed(record.messages) == [e for e in live_feed.history if e["type"] in transcript_kinds]

    # the renderer: the replay is what the live screen showed, after the user's line
    assert replayed(record.messages) == ["› pick a database", *screen.getvalue().splitlines()]
    assert screen.getvalue().splitlines() == [
        "Let me ask.", "· ask_user_question → answered (1)", "· nope ✗ UNKNOWN_TOOL", "Done."]

    # sessions show: the same calls and results, in the same order, with the question
    lines = transcript(record, batches)
    calls = [line.split()[1] for line in lines if line.startswith("  -> ")]
    named = [line for line in lines if line.startswith("tool result (")]
    assert calls == [e.name for e in live if isinstance(e, ToolStarted)]
    assert named == [f"tool result ({e.name}):" for e in results]
    assert f"     question {batches[0].rpc_id}: answered" in lines
    assert lines[lines.index("system:") + 1] == "  Be brief."


def test_a_hand_edited_store_still_loads_resumes_and_shows(tmp_path, dsh_home):
    with SessionStore.open() as store:
        session_id = store.create_session("script")
    rows = [
        ("user", 42, None, None),
        ("user", b"a blob\xff", None, None),
        ("assistant", None, "{not json", None),
        ("assistant", "", json.dumps([call("c1", "ask_user_question"), "junk"]), None),
        ("tool", "no call id", None, None),
        ("assistant", "", "[" * 100_000, None),
    ]
    db = sqlite3.connect(dsh_home / "sessions.db")
    with db:
        db.executemany(
            "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, "
            "created_at) VALUES (?, ?, ?, ?, ?, '2024-01-01T00:00:00Z')",
            [(session_id, *row) for row in rows])
        db.execute("INSERT INTO questions (rpc_id, session_id, call_id, request, status, "
                   "created_at, updated_at) VALUES ('q_1', ?, 'c1', '{\"questions\": []}', "
                   "'interrupted', '2024-01-01', '2024-01-01')", (session_id,))
    db.close()
    with SessionStore.open() as store:
        record = store.load_session(session_id)
    assert record.pending_rpc_ids == {"c1": "q_1"}  # its call still has no result
    assert [m["content"] for m in record.messages[:2]] == ["42", "a blob\ufffd"]
    assert record.messages[-1]["tool_calls"] == "[" * 100_000  # kept, as unreadable text
    assert pending_tool_calls(record.messages) == []  # the last assistant message has none
    # the stray result names no call, so a resume from there would run the ask again
    assert pending_tool_calls(record.messages[:-1]) == [
        ToolCall("c1", "ask_user_question", "{}")]
    shown = subprocess.run([DSH, "sessions", "show", session_id], capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    assert "  -> ask_user_question {}" in shown.stdout
    assert "question q_1: interrupted" in shown.stdout
    assert "tool result ():" in shown.stdout
    as_json = subprocess.run([DSH, "sessions", "show", session_id, "--json"],
                             capture_output=True, text=True, timeout=60)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["messages"][2]["tool_calls"] == "{not json"
