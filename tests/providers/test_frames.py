"""The one frame parser and dispatcher: its table, its rules, and what it sends back.

That the relay and the web host give the same outcomes through it is pinned end to end
in ``tests/web/test_frame_parity.py``.
"""

from __future__ import annotations

import asyncio
import json
from typing import ClassVar, Literal

import pytest

from dsh_cli.core.events import ErrorEvent, QuestionRequested, ResponseAck
from dsh_cli.interaction import AskUserQuestionRequest, PendingQuestions
from dsh_cli.permissions import PermissionRequest
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.providers.frames import (
    FRAME_TYPES,
    BadFrame,
    Frame,
    FrameDispatcher,
    QuestionAnswerFrame,
    decode_frame,
    frame_from_json,
    parse_frame,
)

QUESTIONS = {"questions": [{"id": "db", "question": "Which database?",
                            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}
GOOD = [{"id": "db", "selected": ["SQLite"]}]

# one valid frame of every kind: a row added to FRAME_TYPES needs its sample here
SAMPLES = {
    "question/answer": {"type": "question/answer", "rpc_id": "q_1", "session_id": "s1",
                        "answers": GOOD},
    "question/cancel": {"type": "question/cancel", "rpc_id": "q_1", "session_id": "s1"},
    "question/decline": {"type": "question/decline", "rpc_id": "q_1", "session_id": "s1"},
    "question/discuss": {"type": "question/discuss", "rpc_id": "q_1", "session_id": "s1"},
    "questions/replay": {"type": "questions/replay"},
    "user/message": {"type": "user/message", "content": "hello"},
    "permission/decision": {"type": "permission/decision", "rpc_id": "p_1", "session_id": "s1",
                            "decision": "allow_once", "message": "fine"},
}


def pending_question(scenario, session_id="s1"):
    """Run ``scenario(table, rpc_id)`` with one batch registered in a fresh table."""

    async def go():
        table = PendingQuestions(session_id)
        entry = table.register(AskUserQuestionRequest.model_validate(QUESTIONS))
        return scenario(table, entry.rpc_id)

    return asyncio.run(go())


# -- the table ------------------------------------------------------------------------------

def test_every_kind_in_the_table_has_a_sample():
    assert set(SAMPLES) == set(FRAME_TYPES)


@pytest.mark.parametrize("kind", SAMPLES)
def test_every_row_parses_to_its_model_from_a_line_a_body_or_a_value(kind):
    value = SAMPLES[kind]
    from_value = frame_from_json(value)
    assert type(from_value) is FRAME_TYPES[kind] and from_value.type == kind
    assert parse_frame(json.dumps(value)) == from_value
    assert parse_frame(json.dumps(value).encode()) == from_value


def test_a_new_kind_is_one_model_with_apply_and_one_row(monkeypatch):
    class PingFrame(Frame):
        type: Literal["test/ping"]
        text: str
        seen: ClassVar[list[str]] = []

        def apply(self, to):
            self.seen.append(self.text)
            return [ErrorEvent("PONG", self.text)]

    monkeypatch.setitem(FRAME_TYPES, "test/ping", PingFrame)
    dispatcher = FrameDispatcher(PendingQuestions())
    assert dispatcher.dispatch('{"type": "test/ping", "text": "hi"}') == [ErrorEvent("PONG", "hi")]
    assert PingFrame.seen == ["hi"]
    with pytest.raises(BadFrame, match="test/ping: text: field required"):
        dispatcher.dispatch('{"type": "test/ping"}')


# -- the rules --------------------------------------------------------------------------------

def test_an_absent_session_id_is_null():
    frame = frame_from_json({"type": "question/answer", "rpc_id": "q", "answers": []})
    assert isinstance(frame, QuestionAnswerFrame) and frame.session_id is None


@pytest.mark.parametrize(("value", "message"), [
    ({"type": "question/answer", "rpc_id": "q", "answers": "SQLite"},
     "question/answer: answers: Input should be a valid list"),
    ({"type": "question/answer", "rpc_id": "q", "answers": [], "session_id": 5},
     "question/answer: session_id: Input should be a valid string"),
    ({"type": "question/answer", "session_id": None, "answers": []},
     "question/answer: rpc_id: field required"),
    ({"type": "user/message", "content": " \t"}, "user/message: content: must not be blank"),
    ({"type": "nope"}, 'unknown frame type "nope" (known: question/answer, question/cancel, '
                       "question/decline, question/discuss, questions/replay, user/message, "
                       "permission/decision)"),
    ({"type": "permission/decision", "rpc_id": "p", "decision": ["deny"]},
     "permission/decision: decision: Input should be a valid string"),
    ({"type": "permission/decision", "rpc_id": "p", "decision": "deny", "message": 3},
     "permission/decision: message: Input should be a valid string"),
    ({"type": 7}, 'a frame needs a string "type"'),
    ([1, 2], "a frame must be a JSON object, got array"),
    (None, "a frame must be a JSON object, got null"),
])
def test_a_bad_value_is_bad_frame_naming_the_problem(value, message):
    with pytest.raises(BadFrame) as caught:
        frame_from_json(value)
    assert caught.value.code == "BAD_FRAME"
    assert caught.value.message == message
    assert caught.value.event() == ErrorEvent("BAD_FRAME", message)


def test_bad_frame_carries_the_frame_type_when_it_is_known():
    with pytest.raises(BadFrame) as known:
        frame_from_json({"type": "question/cancel"})
    with pytest.raises(BadFrame) as unknown:
        decode_frame("not json")
    assert known.value.frame_type == "question/cancel"
    assert unknown.value.frame_type is None


def test_extra_fields_are_ignored_and_frames_are_immutable():
    frame = frame_from_json({"type": "question/cancel", "rpc_id": "q", "reason": "closed tab"})
    assert frame.model_dump() == {"type": "question/cancel", "rpc_id": "q", "session_id": None}
    with pytest.raises(ValueError, match="frozen"):
        frame.rpc_id = "other"  # type: ignore[misc]


def test_a_stdin_line_and_a_post_body_with_the_same_bad_byte_get_the_same_message():
    raw = '{"type": "user/message", "content": "名前 '.encode() + b'\xff"}'
    offset = raw.index(b"\xff")  # in bytes: the line's characters before it are fewer
    as_line = raw.decode("utf-8", "surrogateescape")  # how the relay's reader hands it over
    with pytest.raises(BadFrame) as from_line:
        decode_frame(as_line)
    with pytest.raises(BadFrame) as from_body:
        decode_frame(raw)
    assert from_line.value.message == from_body.value.message
    assert from_body.value.message == f"a frame must be UTF-8 (bad byte at offset {offset})"


@pytest.mark.parametrize("raw", [b'\xef\xbb\xbf{"type": "questions/replay"}',
                                 '\ufeff{"type": "questions/replay"}'])
def test_a_byte_order_mark_is_not_json(raw):
    with pytest.raises(BadFrame, match="not valid JSON"):
        decode_frame(raw)


def test_a_value_nested_too_deeply_is_bad_frame():
    with pytest.raises(BadFrame, match="not valid JSON"):
        decode_frame("[" * 100_000 + "]" * 100_000)


def test_default_type_applies_only_to_an_object_without_one():
    assert frame_from_json({"content": "hi"}, "user/message").type == "user/message"
    assert frame_from_json({"type": "questions/replay"}, "user/message").type == (
        "questions/replay")
    with pytest.raises(BadFrame, match='a frame needs a string "type"'):
        frame_from_json({"content": "hi"})


# -- dispatching -----------------------------------------------------------------------------

def test_answer_cancel_and_replay_reach_the_pending_table():
    def scenario(table, rpc_id):
        dispatcher = FrameDispatcher(table)
        (replayed,) = dispatcher.dispatch('{"type": "questions/replay"}')
        refused = dispatcher.dispatch(json.dumps(
            {"type": "question/answer", "rpc_id": rpc_id, "answers": GOOD}))
        accepted = dispatcher.dispatch(json.dumps(
            {"type": "question/answer", "rpc_id": rpc_id, "session_id": "s1", "answers": GOOD}))
        late = dispatcher.dispatch(json.dumps({"type": "question/cancel", "rpc_id": rpc_id,
                                               "session_id": "s1"}))
        return rpc_id, replayed, refused, accepted, late, dispatcher.dispatch(
            '{"type": "questions/replay"}')

    rpc_id, replayed, refused, accepted, late, after = pending_question(scenario)
    assert isinstance(replayed, QuestionRequested) and replayed.rpc_id == rpc_id
    assert refused == [ResponseAck(rpc_id, False, "wrong-session",
                                   f"{rpc_id} belongs to session s1; the frame names no "
                                   "session_id")]
    assert accepted == [ResponseAck(rpc_id, True)]
    assert late == [ResponseAck(rpc_id, False, "not-pending", f"no pending question {rpc_id}")]
    assert after == []


def test_accept_narrows_the_kinds_and_a_refused_kind_changes_nothing():
    def scenario(table, rpc_id):
        dispatcher = FrameDispatcher(table, on_message=lambda text: None)
        cancel = json.dumps({"type": "question/cancel", "rpc_id": rpc_id})
        with pytest.raises(BadFrame) as caught:
            dispatcher.dispatch(cancel, accept=("user/message",))
        return caught.value, len(table)

    error, still_pending = pending_question(scenario)
    assert error.message == "question/cancel is not accepted here (accepted: user/message)"
    assert error.frame_type == "question/cancel"
    assert still_pending == 1


def test_a_user_message_goes_to_the_hook_and_is_refused_without_one():
    got: list[str] = []
    line = '{"type": "user/message", "content": "hello"}'
    assert FrameDispatcher(PendingQuestions(), on_message=got.append).dispatch(line) == []
    assert got == ["hello"]
    with pytest.raises(BadFrame, match="only dsh run --jsonl and dsh web take messages"):
        FrameDispatcher(PendingQuestions()).dispatch(line)


def test_permission_frames_reach_the_permission_table():
    async def go():
        table, permissions = PendingQuestions("s1"), RemotePermissions()
        dispatcher = FrameDispatcher(table, permissions=permissions)
        waiting = asyncio.ensure_future(permissions.decide(
            PermissionRequest(tool="mcp__a__b", arguments={"x": 1}, call_id="c1",
                              session_id="s1"), "p_1"))
        await asyncio.sleep(0)
        (replayed,) = dispatcher.dispatch('{"type": "questions/replay"}')
        bad = dispatcher.dispatch('{"type": "permission/decision", "rpc_id": "p_1", '
                                  '"session_id": "s1", "decision": "maybe"}')
        foreign = [dispatcher.dispatch(json.dumps({
            "type": kind, "rpc_id": "p_1", "decision": "allow_always", **session}))
            for kind in ("permission/decision", "question/cancel")
            for session in ({}, {"session_id": "s2"})]
        good = dispatcher.dispatch('{"type": "permission/decision", "rpc_id": "p_1", '
                                   '"session_id": "s1", "decision": "deny", "message": " no "}')
        cancel = dispatcher.dispatch('{"type": "question/cancel", "rpc_id": "p_1", '
                                     '"session_id": "s1"}')
        return replayed, bad, foreign, good, cancel, await waiting

    replayed, bad, foreign, good, cancel, decided = asyncio.run(go())
    assert replayed.to_json() == {"type": "permission/requested", "rpc_id": "p_1",
                                  "session_id": "s1", "call_id": "c1", "tool": "mcp__a__b",
                                  "server": None, "arguments": {"x": 1}, "hints": {}}
    assert bad[0].reason == "bad-response" and good == [ResponseAck("p_1", True)]
    assert [acks[0].reason for acks in foreign] == ["wrong-session"] * 4
    # settled: no longer a permission rpc_id, so the cancel goes to the question table
    assert cancel == [ResponseAck("p_1", False, "not-pending", "no pending question p_1")]
    assert decided.decision == "deny" and decided.message == "no"


def test_a_permission_decision_is_refused_where_nothing_asks_permission():
    with pytest.raises(BadFrame, match="permission/decision is not accepted here"):
        FrameDispatcher(PendingQuestions()).dispatch(
            '{"type": "permission/decision", "rpc_id": "p", "decision": "deny"}')
