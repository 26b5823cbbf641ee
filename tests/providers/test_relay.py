"""The JSON-lines relay against the real seam: every event, frame and rule of relay.md."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from harness.relay_wire import QUESTIONS, SESSION, answer, ask_task, outcome, run

from dsh_cli.core.events import (
    AssistantDelta,
    AssistantMessage,
    ReasoningDelta,
    SessionStarted,
    ToolResultEvent,
    ToolStarted,
    TurnCompleted,
    UserMessage,
)
from dsh_cli.interaction import (
    AbortSignal,
    AskUserQuestionRequest,
    UserInteraction,
)
from dsh_cli.providers.frames import BadFrame, parse_frame
from dsh_cli.providers.relay import JsonLinesRelay

GOOD = [{"id": "db", "selected": ["SQLite"]},
        {"id": "features", "selected": ["Billing", "Auth"]},
        {"id": "name", "custom": "  acme  "}]
NORMALISED = {"answers": [{"id": "db", "selected": ["SQLite"]},
                          {"id": "features", "selected": ["Auth", "Billing"]},
                          {"id": "name", "selected": [], "custom": "acme"}]}


# -- events ----------------------------------------------------------------------------

def test_every_protocol_event_is_one_flushed_json_line():
    async def scenario(ui, relay, wire):
        ui.events.emit(SessionStarted(SESSION, "demo"))
        ui.events.emit(UserMessage("hi"))  # the store's record, not a relay event
        ui.events.emit(AssistantDelta("Hel"))
        ui.events.emit(ReasoningDelta("thinking"))  # not in relay.md
        ui.events.emit(AssistantMessage("Hello", [{"id": "c1", "name": "t", "arguments": "{}"}]))
        ui.events.emit(ToolStarted("c1", "t", "{}"))
        ui.events.emit(ToolResultEvent("c1", "t", "ok", None))
        ui.events.emit(TurnCompleted(SESSION))

    _, wire = run(scenario)
    assert [event["type"] for event in wire.events] == [
        "session/started", "assistant/delta", "assistant/message", "tool/started",
        "tool/result", "turn/completed"]
    assert wire.events[0] == {"type": "session/started", "session_id": SESSION, "model": "demo"}
    assert wire.events[2]["tool_calls"] == [{"id": "c1", "name": "t", "arguments": "{}"}]
    assert wire.events[4] == {"type": "tool/result", "call_id": "c1", "name": "t",
                              "content": "ok", "error": None}
    assert wire.flushes == len(wire.events)


def test_non_ascii_text_is_escaped_so_each_line_is_plain_ascii():
    async def scenario(ui, relay, wire):
        ui.events.emit(AssistantDelta("名前\u2028✓"))

    _, wire = run(scenario)
    assert wire.events == [{"type": "assistant/delta", "text": "名前\u2028✓"}]


def test_questions_only_writes_only_question_events():
    async def scenario(ui, relay, wire):
        ui.events.emit(SessionStarted(SESSION, "demo"))
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        ui.events.emit(TurnCompleted(SESSION))
        wire.send("nonsense")
        wire.send(answer(requested["rpc_id"], GOOD))
        return await outcome(task)

    result, wire = run(scenario, questions_only=True)
    assert result == NORMALISED
    assert [event["type"] for event in wire.events] == [
        "question/requested", "error", "response/ack", "question/resolved"]


# -- answering --------------------------------------------------------------------------

def test_answer_is_acked_then_resolved_and_becomes_the_answer():
    async def scenario(ui, relay, wire):
        task = ask_task(ui, call_id="call_1")
        (requested,) = await wire.wait_for("question/requested")
        wire.send(answer(requested["rpc_id"], GOOD))
        return requested, await outcome(task)

    (requested, result), wire = run(scenario)
    assert result == NORMALISED
    rpc_id = requested["rpc_id"]
    assert isinstance(rpc_id, str) and rpc_id
    assert requested == {"type": "question/requested", "rpc_id": rpc_id, "session_id": SESSION,
                         "call_id": "call_1", "questions": AskUserQuestionRequest.model_validate(
                             {"questions": QUESTIONS}).questions_json()}
    assert requested["questions"][1]["multi_select"] is True
    assert wire.events[1:] == [
        {"type": "response/ack", "rpc_id": rpc_id, "accepted": True},
        {"type": "question/resolved", "rpc_id": rpc_id, "outcome": "answered",
         "answer": NORMALISED},
    ]


def test_an_answer_sent_the_instant_the_question_is_written_is_accepted():
    """Register before announce: no answer can race ahead of its question."""
    async def scenario(ui, relay, wire):
        def answer_at_once(event):
            if event.type == "question/requested":
                wire.send(answer(event.rpc_id, GOOD))
                relay._dispatch(json.dumps(answer(event.rpc_id, GOOD)))

        ui.events.subscribe(answer_at_once)
        result = await outcome(ask_task(ui))
        await wire.wait_for("response/ack", 2)
        return result

    result, wire = run(scenario)
    assert result == NORMALISED
    assert [(a["accepted"], a.get("reason")) for a in wire.of("response/ack")] == [
        (True, None), (False, "not-pending")]


def test_answer_before_the_question_exists_is_not_pending():
    async def scenario(ui, relay, wire):
        wire.send(answer("q_future", GOOD))
        await wire.wait_for("response/ack")
        task = ask_task(ui, rpc_id="q_future")
        await wire.wait_for("question/requested")
        wire.send(answer("q_future", GOOD))
        return await outcome(task)

    result, wire = run(scenario)
    assert result == NORMALISED
    acks = wire.of("response/ack")
    assert acks[0] == {"type": "response/ack", "rpc_id": "q_future", "accepted": False,
                       "reason": "not-pending", "message": "no pending question q_future"}
    assert acks[1]["accepted"] is True


def test_late_and_duplicate_answers_are_not_pending():
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        wire.send(answer(requested["rpc_id"], GOOD))
        result = await outcome(task)
        wire.send(answer(requested["rpc_id"], GOOD))
        await wire.wait_for("response/ack", 2)
        return result

    result, wire = run(scenario)
    assert result == NORMALISED
    assert [(a["accepted"], a.get("reason")) for a in wire.of("response/ack")] == [
        (True, None), (False, "not-pending")]
    assert len(wire.of("question/resolved")) == 1


def test_two_concurrent_valid_responses_exactly_one_accepted():
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        other = [dict(GOOD[0], selected=["PostgreSQL"]), *GOOD[1:]]
        # both lines in one write: they reach dsh back to back, before any settlement
        wire.send(json.dumps(answer(requested["rpc_id"], other)) + "\n"
                  + json.dumps(answer(requested["rpc_id"], GOOD)))
        return await outcome(task)

    result, wire = run(scenario)
    assert result["answers"][0]["selected"] == ["PostgreSQL"]
    assert [a["accepted"] for a in wire.of("response/ack")] == [True, False]
    assert wire.of("response/ack")[1]["reason"] == "not-pending"
    assert len(wire.of("question/resolved")) == 1


BAD_RESPONSES = {
    "wrong id": [dict(GOOD[0], id="database"), *GOOD[1:]],
    "wrong order": [GOOD[1], GOOD[0], GOOD[2]],
    "missing item": GOOD[:2],
    "unknown label": [{"id": "db", "selected": ["MySQL"]}, *GOOD[1:]],
    "duplicate label": [GOOD[0], {"id": "features", "selected": ["Auth", "Auth"]}, GOOD[2]],
    "two labels on a single-select": [{"id": "db", "selected": ["PostgreSQL", "SQLite"]},
                                      *GOOD[1:]],
    "label plus custom": [{"id": "db", "selected": ["SQLite"], "custom": "x"}, *GOOD[1:]],
    "blank custom": [*GOOD[:2], {"id": "name", "custom": "   "}],
    "item not an object": [5, *GOOD[1:]],
}


@pytest.mark.parametrize("answers", BAD_RESPONSES.values(), ids=BAD_RESPONSES.keys())
def test_bad_response_is_refused_and_the_question_stays_pending(answers):
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        wire.send(answer(requested["rpc_id"], answers))
        await wire.wait_for("response/ack")
        assert not task.done() and len(ui.pending) == 1
        wire.send(answer(requested["rpc_id"], GOOD))
        return await outcome(task)

    result, wire = run(scenario)
    assert result == NORMALISED
    refused, accepted = wire.of("response/ack")
    assert (refused["accepted"], refused["reason"]) == (False, "bad-response")
    assert refused["message"]
    assert accepted["accepted"] is True


def test_response_for_another_session_is_wrong_session_and_stays_pending():
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        wire.send(answer(requested["rpc_id"], GOOD, session_id="s_other"))
        wire.send(answer(requested["rpc_id"], GOOD, session_id=None))
        without = answer(requested["rpc_id"], GOOD)
        del without["session_id"]  # absent is null: not this session's answer either
        wire.send(without)
        await wire.wait_for("response/ack", 3)
        assert not task.done()
        wire.send(answer(requested["rpc_id"], GOOD))
        return await outcome(task)

    result, wire = run(scenario)
    assert result == NORMALISED
    assert [a.get("reason") for a in wire.of("response/ack")] == [
        "wrong-session", "wrong-session", "wrong-session", None]


def test_without_a_session_the_answer_echoes_null():
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        assert requested["session_id"] is None
        wire.send(answer(requested["rpc_id"], GOOD, session_id=None))
        return await outcome(task)

    result, _ = run(scenario, session_id=None)
    assert result == NORMALISED


# -- cancel, abort, timeout, end of input --------------------------------------------------

def test_cancel_frame_cancels_the_batch():
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        wire.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                   "session_id": SESSION})
        result = await outcome(task)
        wire.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                   "session_id": SESSION})
        await wire.wait_for("response/ack", 2)
        return requested["rpc_id"], result

    (rpc_id, result), wire = run(scenario)
    assert result[0] == "ASK_CANCELLED"
    assert wire.events[1:] == [
        {"type": "response/ack", "rpc_id": rpc_id, "accepted": True},
        {"type": "question/resolved", "rpc_id": rpc_id, "outcome": "cancelled"},
        {"type": "response/ack", "rpc_id": rpc_id, "accepted": False, "reason": "not-pending",
         "message": f"no pending question {rpc_id}"},
    ]


def test_abort_signal_aborts_and_resolves_aborted():
    async def scenario(ui, relay, wire):
        signal = AbortSignal()
        task = ask_task(ui, signal=signal)
        (requested,) = await wire.wait_for("question/requested")
        signal.abort("interrupted")
        result = await outcome(task)
        wire.send(answer(requested["rpc_id"], GOOD))
        await wire.wait_for("response/ack")
        return result

    result, wire = run(scenario)
    assert result[0] == "ASK_ABORTED"
    assert wire.of("question/resolved")[0]["outcome"] == "aborted"
    assert wire.of("response/ack")[0]["reason"] == "not-pending"


def test_timeout_resolves_timeout():
    async def scenario(ui, relay, wire):
        return await outcome(ask_task(ui))

    result, wire = run(scenario, timeout=0.05)
    assert result[0] == "ASK_TIMEOUT"
    assert [e["type"] for e in wire.events] == ["question/requested", "question/resolved"]
    assert wire.of("question/resolved")[0]["outcome"] == "timeout"


def test_stdin_closed_while_pending_aborts_with_input_closed():
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        await wire.wait_for("question/requested")
        wire.close()
        result = await outcome(task)
        assert relay.eof.is_set()
        return result, await relay.next_user_message()

    (result, message), wire = run(scenario)
    assert result == ("ASK_ABORTED", "input closed")
    assert message is None
    assert wire.of("question/resolved")[0]["outcome"] == "aborted"


def test_a_question_asked_after_end_of_input_is_aborted_at_once():
    async def scenario(ui, relay, wire):
        wire.close()
        await relay.eof.wait()
        return await outcome(ask_task(ui))

    result, wire = run(scenario)
    assert result == ("ASK_ABORTED", "input closed")
    assert [e["type"] for e in wire.events] == ["question/requested", "question/resolved"]


def test_a_last_answer_before_end_of_input_still_counts():
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        wire.send(answer(requested["rpc_id"], GOOD))
        wire.close()
        return await outcome(task)

    result, _ = run(scenario)
    assert result == NORMALISED


# -- replay -----------------------------------------------------------------------------

def test_replay_reemits_every_pending_batch_with_the_same_ids():
    async def scenario(ui, relay, wire):
        first = ask_task(ui, rpc_id="q_resumed", call_id="call_1")
        await wire.wait_for("question/requested")
        second = ask_task(ui, QUESTIONS[:1])  # queued behind the first, not yet shown
        wire.send({"type": "questions/replay"})
        await wire.wait_for("question/requested", 2)
        wire.send(answer("q_resumed", GOOD))
        await first
        (_, _, third) = await wire.wait_for("question/requested", 3)
        wire.send({"type": "questions/replay"})
        await wire.wait_for("question/requested", 4)
        wire.send(answer(third["rpc_id"], GOOD[:1]))
        return await outcome(second)

    result, wire = run(scenario)
    assert result == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    requested = wire.of("question/requested")
    assert requested[0] == requested[1]
    assert requested[0]["rpc_id"] == "q_resumed" and requested[0]["call_id"] == "call_1"
    assert requested[2] == requested[3] and requested[2]["rpc_id"] != "q_resumed"


def test_replay_with_nothing_pending_writes_nothing():
    async def scenario(ui, relay, wire):
        wire.send({"type": "questions/replay"})
        wire.send({"type": "user/message", "content": "sync"})
        await relay.next_user_message()

    _, wire = run(scenario)
    assert wire.events == []


# -- user messages --------------------------------------------------------------------------

def test_user_messages_are_queued_in_order_and_end_with_none():
    async def scenario(ui, relay, wire):
        wire.send({"type": "user/message", "content": "first"})
        wire.send({"type": "user/message", "content": "second"})
        wire.close()
        return [await relay.next_user_message() for _ in range(4)]

    messages, wire = run(scenario)
    assert messages == ["first", "second", None, None]
    assert wire.events == []


def test_user_message_is_refused_by_questions_only_relay():
    async def scenario(ui, relay, wire):
        wire.send({"type": "user/message", "content": "hi"})
        return await wire.wait_for("error")

    (error,), _ = run(scenario, questions_only=True)
    assert error["code"] == "BAD_FRAME" and "dsh run" in error["message"]


# -- malformed frames ----------------------------------------------------------------------

MALFORMED = {
    "not json": "this is not json",
    "truncated json": '{"type": "question/answer", ',
    "array": "[1, 2]",
    "string": '"question/answer"',
    "no type": '{"rpc_id": "q_1"}',
    "type not a string": '{"type": 7}',
    "unknown type": '{"type": "question/explode"}',
    "answer without rpc_id": '{"type": "question/answer", "session_id": null, "answers": []}',
    "answer without answers": '{"type": "question/answer", "rpc_id": "q", "session_id": null}',
    "rpc_id a number": '{"type": "question/answer", "rpc_id": 5, "session_id": null, '
                       '"answers": []}',
    "answers not a list": '{"type": "question/answer", "rpc_id": "q", "session_id": null, '
                          '"answers": {"db": "x"}}',
    "cancel without rpc_id": '{"type": "question/cancel"}',
    "user message not a string": '{"type": "user/message", "content": ["hi"]}',
    "invalid utf-8": b'{"type": "user/message", "content": "\xff\xfe"}',
}


@pytest.mark.parametrize("line", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_line_is_an_error_event_and_the_relay_carries_on(line):
    async def scenario(ui, relay, wire):
        task = ask_task(ui)
        (requested,) = await wire.wait_for("question/requested")
        wire.send(line)
        await wire.wait_for("error")
        assert not task.done()
        wire.send(answer(requested["rpc_id"], GOOD))
        return await outcome(task)

    result, wire = run(scenario)
    assert result == NORMALISED
    (error,) = wire.of("error")
    assert set(error) == {"type", "code", "message"}
    assert error["code"] == "BAD_FRAME" and error["message"]


def test_blank_lines_are_ignored():
    async def scenario(ui, relay, wire):
        wire.send("")
        wire.send("   ")
        wire.send({"type": "user/message", "content": "x"})
        return await relay.next_user_message()

    result, wire = run(scenario)
    assert result == "x" and wire.events == []


def test_extra_fields_are_ignored_for_forward_compatibility():
    frame = parse_frame('{"type": "question/cancel", "rpc_id": "q", "reason": "closed tab"}')
    assert frame.rpc_id == "q"


def test_bad_frame_messages_name_the_problem():
    with pytest.raises(BadFrame, match="unknown frame type"):
        parse_frame('{"type": "nope"}')
    with pytest.raises(BadFrame, match=r"question/answer: rpc_id: field required"):
        parse_frame('{"type": "question/answer", "session_id": null, "answers": []}')


# -- streams ---------------------------------------------------------------------------------

def test_text_input_and_binary_output_streams_work():
    output = io.BytesIO()

    async def go():
        ui = UserInteraction()
        relay = JsonLinesRelay(ui, io.StringIO('{"type": "user/message", "content": "hi"}\n'),
                               output)
        await relay.start()
        ui.events.emit(AssistantDelta("x"))
        messages = [await relay.next_user_message(), await relay.next_user_message()]
        await relay.close()
        return messages

    assert asyncio.run(go()) == ["hi", None]
    assert output.getvalue() == b'{"type":"assistant/delta","text":"x"}\n'


def test_a_closed_output_does_not_break_the_run():
    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    async def go():
        ui = UserInteraction()
        relay = JsonLinesRelay(ui, io.StringIO(""), Closed())
        await relay.start()
        ui.events.emit(AssistantDelta("x"))
        ui.events.emit(AssistantDelta("y"))
        await relay.eof.wait()
        await relay.close()
        return True

    assert asyncio.run(go())


def test_close_stops_writing_events():
    async def scenario(ui, relay, wire):
        ui.events.emit(AssistantDelta("before"))
        await relay.close()
        ui.events.emit(AssistantDelta("after"))

    _, wire = run(scenario)
    assert [e["text"] for e in wire.events] == ["before"]
