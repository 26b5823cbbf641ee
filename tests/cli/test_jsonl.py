"""`dsh run --jsonl` and `dsh ask --jsonl` as a controlling program sees them: a subprocess."""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess

import pytest
from harness.dsh_under_test import DSH
from harness.jsonl_controller import WAIT, Controller

needs_ask = pytest.mark.skipif(importlib.util.find_spec("dsh_cli.cli.ask") is None,
                               reason="dsh ask has not landed in this checkout yet")

DEMO_GOOD = [{"id": "stack", "selected": ["Go + chi"]},
             {"id": "features", "selected": ["CI", "Auth"]},
             {"id": "name", "custom": "acme"}]


@pytest.fixture
def controller():
    started: list[Controller] = []

    def start(*args: str) -> Controller:
        started.append(Controller(*args))
        return started[-1]

    yield start
    for each in started:
        each.kill()


def script(tmp_path, *turns):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"script:{path}"


def answer(requested, answers, **override):
    frame = {"type": "question/answer", "rpc_id": requested["rpc_id"],
             "session_id": requested["session_id"], "answers": answers}
    return {**frame, **override}


# -- dsh run --jsonl ---------------------------------------------------------------------

def test_run_demo_full_conversation_over_json_lines(controller):
    dsh = controller("run", "--jsonl", "--model", "demo", "set up a project")
    started = dsh.next()
    assert started["type"] == "session/started" and started["model"] == "demo"
    session_id = started["session_id"]
    assert isinstance(session_id, str) and session_id
    requested = dsh.until("question/requested")
    assert requested["session_id"] == session_id
    assert [q["id"] for q in requested["questions"]] == ["stack", "features", "name"]
    tool_started = dsh.of("tool/started")[0]
    assert requested["call_id"] == tool_started["call_id"]
    assert tool_started["name"] == "ask_user_question"
    dsh.send(answer(requested, DEMO_GOOD))
    ack = dsh.next()
    assert ack == {"type": "response/ack", "rpc_id": requested["rpc_id"], "accepted": True}
    resolved = dsh.next()
    normalised = {"answers": [{"id": "stack", "selected": ["Go + chi"]},
                              {"id": "features", "selected": ["Auth", "CI"]},
                              {"id": "name", "selected": [], "custom": "acme"}]}
    assert resolved == {"type": "question/resolved", "rpc_id": requested["rpc_id"],
                        "outcome": "answered", "answer": normalised}
    result = dsh.until("tool/result")
    assert result["call_id"] == requested["call_id"] and result["error"] is None
    assert json.loads(result["content"]) == normalised
    completed = dsh.until("turn/completed")
    assert completed == {"type": "turn/completed", "session_id": session_id}
    final = [m for m in dsh.of("assistant/message") if not m["tool_calls"]][-1]
    assert "Go + chi" in final["content"] and "acme" in final["content"]
    assert "".join(d["text"] for d in dsh.of("assistant/delta")).endswith(final["content"])
    assert dsh.finish() == 0
    assert len(dsh.of("turn/completed")) == 1


def test_run_without_prompt_waits_for_user_messages_until_stdin_closes(controller, tmp_path):
    model = script(tmp_path, {"content": "first reply"}, {"content": "second reply"})
    dsh = controller("run", "--jsonl", "--model", model)
    assert dsh.next()["type"] == "session/started"
    dsh.send({"type": "user/message", "content": "hello"})
    dsh.until("turn/completed")
    assert dsh.of("assistant/message")[-1]["content"] == "first reply"
    assert dsh.process.poll() is None  # stdin still open: waiting for the next message
    dsh.send({"type": "user/message", "content": "again"})
    dsh.until("turn/completed")
    assert dsh.of("assistant/message")[-1]["content"] == "second reply"
    assert dsh.finish() == 0
    assert len(dsh.of("turn/completed")) == 2


def test_run_bad_frames_and_bad_responses_keep_the_question_pending(controller):
    dsh = controller("run", "--jsonl", "--model", "demo", "x")
    requested = dsh.until("question/requested")
    for line in ("not json", "[]", '{"type": "nope"}', '{"type": "question/cancel"}'):
        dsh.send(line)
        error = dsh.next()
        assert error["type"] == "error" and error["code"] == "BAD_FRAME", error
    refusals = [
        (answer(requested, DEMO_GOOD, session_id="s_other"), "wrong-session"),
        (answer(requested, DEMO_GOOD[:2]), "bad-response"),
        (answer(requested, [{"id": "stack", "selected": ["Rust"]}, *DEMO_GOOD[1:]]),
         "bad-response"),
        (answer(requested, [DEMO_GOOD[1], DEMO_GOOD[0], DEMO_GOOD[2]]), "bad-response"),
        (answer({"rpc_id": "q_unknown", "session_id": requested["session_id"]}, DEMO_GOOD),
         "not-pending"),
    ]
    for frame, reason in refusals:
        dsh.send(frame)
        ack = dsh.next()
        assert (ack["type"], ack["accepted"], ack["reason"]) == ("response/ack", False, reason)
    dsh.send({"type": "questions/replay"})
    assert dsh.next() == requested  # still pending, same rpc_id
    dsh.send(answer(requested, DEMO_GOOD))
    assert dsh.next()["accepted"] is True
    assert dsh.next()["outcome"] == "answered"
    dsh.until("turn/completed")
    assert dsh.finish() == 0


def test_run_cancel_frame_becomes_ask_cancelled_for_the_model(controller):
    dsh = controller("run", "--jsonl", "--model", "demo", "x")
    requested = dsh.until("question/requested")
    dsh.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
              "session_id": requested["session_id"]})
    assert dsh.next()["accepted"] is True
    assert dsh.next() == {"type": "question/resolved", "rpc_id": requested["rpc_id"],
                          "outcome": "cancelled"}
    result = dsh.until("tool/result")
    assert result["error"]["code"] == "ASK_CANCELLED"
    dsh.until("turn/completed")
    assert dsh.finish() == 0


def test_run_stdin_closed_while_pending_aborts_and_the_run_completes(controller):
    dsh = controller("run", "--jsonl", "--model", "demo", "x")
    requested = dsh.until("question/requested")
    dsh.process.stdin.close()
    assert dsh.next() == {"type": "question/resolved", "rpc_id": requested["rpc_id"],
                          "outcome": "aborted"}
    result = dsh.next()
    assert result["type"] == "tool/result"
    assert result["error"] == {"name": "UserInteractionError", "code": "ASK_ABORTED",
                               "message": "input closed"}
    assert dsh.finish() == 0
    assert dsh.events[-1]["type"] == "turn/completed"


def test_run_with_prompt_and_no_questions_completes_with_stdin_already_closed(tmp_path):
    model = script(tmp_path, {"content": "done"})
    result = subprocess.run([DSH, "run", "--jsonl", "--model", model, "hi"],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=WAIT)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["type"] for e in events] == [
        "session/started", "assistant/delta", "assistant/message", "turn/completed"]


def test_run_jsonl_with_prompt_from_stdin_is_a_usage_error():
    result = subprocess.run([DSH, "run", "--jsonl", "--model", "demo", "-"], input="",
                            capture_output=True, text=True, timeout=WAIT)
    assert result.returncode == 2 and result.stdout == ""


# -- dsh ask --jsonl ----------------------------------------------------------------------

ASK = ("ask", "--jsonl", "-q", "Deploy now?", "-o", "yes", "-o", "no", "--header", "Deploy")


@needs_ask
def test_ask_writes_only_question_events_and_exits_after_resolution(controller):
    dsh = controller(*ASK)
    requested = dsh.next()
    assert requested["type"] == "question/requested"
    assert requested["questions"][0]["id"] == "q1"
    assert [o["label"] for o in requested["questions"][0]["options"]] == ["yes", "no"]
    dsh.send('{"type": "user/message", "content": "run only"}')
    assert dsh.next()["code"] == "BAD_FRAME"
    dsh.send(answer(requested, [{"id": "q1", "selected": ["maybe"]}]))
    assert dsh.next()["reason"] == "bad-response"
    dsh.send(answer(requested, [{"id": "q1", "selected": ["no"]}]))
    assert dsh.next()["accepted"] is True
    assert dsh.next() == {"type": "question/resolved", "rpc_id": requested["rpc_id"],
                          "outcome": "answered",
                          "answer": {"answers": [{"id": "q1", "selected": ["no"]}]}}
    assert dsh.next() is None  # exits right after question/resolved, stdin still open
    assert dsh.process.wait(timeout=WAIT) == 0
    assert {e["type"] for e in dsh.events} <= {
        "question/requested", "response/ack", "question/resolved", "error"}


@needs_ask
def test_ask_cancel_exits_130(controller):
    dsh = controller(*ASK)
    requested = dsh.next()
    dsh.send({"type": "question/cancel", "rpc_id": requested["rpc_id"]})
    assert dsh.next()["accepted"] is True
    assert dsh.next()["outcome"] == "cancelled"
    assert dsh.finish() == 130


@needs_ask
def test_ask_stdin_closed_while_pending_is_aborted_exit_1(controller):
    dsh = controller(*ASK)
    requested = dsh.next()
    assert dsh.finish() == 1
    assert dsh.events[-1] == {"type": "question/resolved", "rpc_id": requested["rpc_id"],
                              "outcome": "aborted"}
    assert "ASK_ABORTED" in dsh.stderr()


@needs_ask
def test_ask_timeout_exits_124(controller):
    dsh = controller(*ASK, "--timeout", "0.2")
    dsh.next()
    assert dsh.next()["outcome"] == "timeout"
    assert dsh.finish() == 124


@needs_ask
def test_ask_request_file_over_jsonl(controller, tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"questions": [
        {"id": "db", "question": "Which database?", "options": [{"label": "SQLite"}]},
        {"id": "name", "question": "Name?"}]}))
    dsh = controller("ask", "--jsonl", str(request))
    requested = dsh.next()
    dsh.send(answer(requested, [{"id": "db", "selected": []}, {"id": "name", "custom": "x"}]))
    assert dsh.next()["accepted"] is True
    assert dsh.next()["answer"]["answers"][1] == {"id": "name", "selected": [], "custom": "x"}
    assert dsh.finish() == 0


def test_resumed_run_reasks_the_pending_batch_under_its_original_rpc_id(controller):
    first = controller("run", "--jsonl", "--model", "demo", "x")
    requested = first.until("question/requested")
    first.process.send_signal(signal.SIGTERM)
    assert first.process.wait(timeout=WAIT) == 143
    again = controller("run", "--jsonl", "--model", "demo", "-c")
    assert again.next()["session_id"] == requested["session_id"]
    reasked = again.until("question/requested")
    assert reasked == requested
    again.send(answer(reasked, DEMO_GOOD))
    assert again.next()["accepted"] is True
    assert again.next()["outcome"] == "answered"
    again.until("turn/completed")
    assert again.finish() == 0
