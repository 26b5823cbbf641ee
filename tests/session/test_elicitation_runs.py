"""``dsh run --mcp-config`` with a server that asks (elicitation): the form is a question
batch answered wherever this run's questions are: an answers file, or a controller.

The forms server keeps nothing between calls (each result says what that call received),
so one server process over HTTP serves every run of the module; restarts across a run's
death are ``tests/mcp_client/test_elicitation_resume.py``'s."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH
from harness.http_fake import served
from harness.stored_session import latest_tool_results

CEILING = 60
ANSWERS = {"deploy:target/env": ["production"], "deploy:target/replicas": "3",
           "deploy:approval/approve": ["Yes"], "deploy:approval/tags": ["fast"]}


@pytest.fixture(scope="module")
def forms_url():
    with served("mcp_forms_server.py") as url:
        yield url


def files(tmp_path: Path, url: str) -> tuple[str, str]:
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"forms": {"url": url}}}))
    script = tmp_path / "deploy.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "mcp__forms__deploy", "arguments": {"service": "api"}}]},
        {"content": "done"}]}))
    return str(servers), f"script:{script}"


def run(tmp_path: Path, url: str, *extra: str, input: str | None = None):
    servers, model = files(tmp_path, url)
    return subprocess.run([DSH, "run", "--model", model, "--mcp-config", servers, "--yes",
                           *extra, "go"], capture_output=True, text=True, timeout=CEILING,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL)


def server_saw() -> dict:
    """What the forms server says it received: its result, as the stored session has it."""
    (tool,) = latest_tool_results()
    return json.loads(str(tool["content"]))


def test_an_empty_answers_file_names_every_field_the_server_asks(tmp_path, forms_url):
    empty = tmp_path / "answers.json"
    empty.write_text("{}")
    result = run(tmp_path, forms_url, "--answers", str(empty))
    assert result.returncode == 0, result.stderr
    assert ("answers.json has no answer for 'deploy:target/env' (\"Environment\"), "
            "'deploy:target/replicas'") in result.stderr
    saw = server_saw()
    assert saw["where"] == "cancel" and saw["go"] == "cancel"  # nothing answered: cancel


def test_the_server_receives_typed_values_from_the_answers_file(tmp_path, forms_url):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(ANSWERS))
    result = run(tmp_path, forms_url, "--answers", str(answers))
    assert result.returncode == 0, result.stderr
    assert server_saw() == {
        "service": "api", "where": {"accept": {"env": "production", "replicas": 3}},
        "go": {"accept": {"approve": True, "tags": ["fast"]}}}


def test_a_controller_gets_the_form_fixes_a_refused_value_or_declines(tmp_path, forms_url):
    servers, model = files(tmp_path, forms_url)
    process = subprocess.Popen([DSH, "run", "--jsonl", "--model", model, "--mcp-config",
                                servers, "--yes", "go"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    acks, batches = [], []

    def send(frame):
        process.stdin.write(json.dumps(frame) + "\n")
        process.stdin.flush()

    try:
        for line in process.stdout:
            event = json.loads(line)
            if event["type"] == "question/requested":
                batches.append(event)
                assert event["source"]["name"] == "forms" and event["declinable"] is True
                ids = [question["id"] for question in event["questions"]]
                assert ids == list(ANSWERS)
                bad = [{"id": "deploy:target/env", "selected": ["production"]},
                       {"id": "deploy:target/replicas", "selected": [], "custom": "12"},
                       {"id": "deploy:approval/approve", "selected": ["Yes"]},
                       {"id": "deploy:approval/tags", "selected": []}]
                send({"type": "question/answer", "rpc_id": event["rpc_id"],
                      "session_id": event["session_id"], "answers": bad})
            elif event["type"] == "response/ack":
                acks.append(event)
                if not event["accepted"]:  # the refused replicas: decline the form instead
                    send({"type": "question/decline", "rpc_id": event["rpc_id"],
                          "session_id": batches[-1]["session_id"]})
            elif event["type"] == "turn/completed":
                process.stdin.close()
        assert process.wait(CEILING) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
    assert acks[0]["reason"] == "bad-response" and "at most 9" in acks[0]["message"]
    assert acks[1]["accepted"] is True
    assert server_saw()["where"] == "decline"


def _form_pending(tmp_path: Path, url: str) -> tuple[subprocess.Popen, dict]:
    servers, model = files(tmp_path, url)
    process = subprocess.Popen([DSH, "run", "--jsonl", "--model", model, "--mcp-config",
                                servers, "--yes", "go"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    for line in process.stdout:
        event = json.loads(line)
        if event["type"] == "question/requested":
            return process, event
    raise AssertionError("no question/requested")


def test_a_controller_that_hangs_up_mid_form_cancels_it_at_the_server(tmp_path, forms_url):
    """Both ends closed (the controller died: EOF on stdin, SIGPIPE on stdout)."""
    process, _requested = _form_pending(tmp_path, forms_url)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdout.close()
        process.stdin.close()
        assert process.wait(CEILING) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert process.stderr is not None and b"Traceback" not in process.stderr.read()
    assert server_saw()["where"] == "cancel"


def test_malformed_frames_mid_form_leave_it_pending_for_the_next_answer(tmp_path, forms_url):
    process, requested = _form_pending(tmp_path, forms_url)
    assert process.stdin is not None and process.stdout is not None
    rpc_id = requested["rpc_id"].encode()
    try:
        for raw in (b'{"type":"question/answer","answers":' + b"[" * 100_000 + b"}",
                    b'\xff{"type":"questions/replay"}', b"x" * 1_500_000,
                    b'{"type":"question/answer","rpc_id":"' + rpc_id + b'","answers":"no"}'):
            process.stdin.write(raw + b"\n")
            process.stdin.flush()
            event = json.loads(process.stdout.readline())
            assert (event["type"], event["code"]) == ("error", "BAD_FRAME")
        process.stdin.write(json.dumps({"type": "question/decline", "rpc_id": requested[
            "rpc_id"], "session_id": requested["session_id"]}).encode() + b"\n")
        process.stdin.flush()
        ack = json.loads(process.stdout.readline())
        assert (ack["type"], ack["accepted"]) == ("response/ack", True)
        process.stdin.close()
        process.stdout.read()
        assert process.wait(CEILING) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert server_saw()["where"] == "decline"
