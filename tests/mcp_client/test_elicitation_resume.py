"""A server's form pending when ``dsh run`` dies is re-asked on ``dsh run --resume`` under
the same ``rpc_id``, then the tool call is retried: with the stored ``requestState`` in
the 2026-07-28 era, by calling the tool again in the session era (``spec/mcp.md`` §3).

Real processes throughout: ``dsh run --jsonl`` shows the form (so the test knows it is
up), is killed, and a second ``dsh run --resume`` answers it from an answers file; the
server (``tests/fakes/mcp_forms_server.py --record``) logs every round it saw.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from fakes.mcp_forms_server import entry
from harness.dsh_under_test import DSH

from dsh_cli.store import SessionStore

CEILING = 60
KEY = "resume-test-key-" + "k" * 32  # the server's requestState key survives its restart
ANSWERS = {"deploy:target/env": ["production"], "deploy:target/replicas": "3",
           "deploy:approval/approve": ["Yes"], "deploy:approval/tags": ["fast"]}
# the session era asks one form per elicitation/create: plain property ids
ONE_AT_A_TIME = {key.split("/")[1]: value for key, value in ANSWERS.items()}
FRAME_ANSWERS = [{"id": "deploy:target/env", "selected": ["production"]},
                 {"id": "deploy:target/replicas", "selected": [], "custom": "3"},
                 {"id": "deploy:approval/approve", "selected": ["Yes"]},
                 {"id": "deploy:approval/tags", "selected": ["fast"]}]
ANSWERED = {"service": "api", "where": {"accept": {"env": "production", "replicas": 3}},
            "go": {"accept": {"approve": True, "tags": ["fast"]}}}


class Setup:
    """The files of one test: the server entry, the model's script, the server's log."""

    def __init__(self, tmp_path: Path, *, legacy: bool = False, keyed: bool = True) -> None:
        self.log = tmp_path / "rounds.jsonl"
        extra = ["--record", str(self.log), *(["--state-key", KEY] if keyed else [])]
        options = {"protocol": "legacy"} if legacy else {}
        self.servers = tmp_path / "servers.json"
        self.servers.write_text(json.dumps({"mcpServers": {"forms": entry(*extra, **options)}}))
        script = tmp_path / "deploy.json"
        script.write_text(json.dumps({"turns": [
            {"tool_calls": [{"name": "mcp__forms__deploy", "arguments": {"service": "api"}}]},
            {"content": "deployed"}]}))
        self.model = f"script:{script}"
        self.answers = tmp_path / "answers.json"
        self.answers.write_text(json.dumps(ONE_AT_A_TIME if legacy else ANSWERS))

    def command(self, *args: str) -> list[str]:
        return [DSH, "run", "--model", self.model, "--mcp-config", str(self.servers), "--yes",
                *args]

    def rounds(self, event: str = "call") -> list[dict]:
        """What the server logged: each round as it arrived (``call``) or was answered."""
        lines = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [line for line in lines if line["event"] == event]


def killed_while_the_form_is_up(setup: Setup, signum: int) -> dict:
    """Run until the form is asked, kill the run; the ``question/requested`` event."""
    process = subprocess.Popen(setup.command("--jsonl", "deploy api"), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    # a run whose server never started waits on its open stdin for the next message: the
    # watchdog ends it, so the loop below ends and the test fails instead of hanging
    watchdog = threading.Timer(CEILING, process.kill)
    watchdog.start()
    try:
        for line in process.stdout:
            event = json.loads(line)
            if event["type"] == "question/requested":
                process.send_signal(signum)
                process.wait(CEILING)
                return event
        raise AssertionError(f"no form was asked: {process.communicate()[1]}")
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait(CEILING)


def resumed(setup: Setup, session_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(setup.command("--resume", session_id, "--answers", str(setup.answers)),
                          capture_output=True, text=True, timeout=CEILING,
                          stdin=subprocess.DEVNULL)


def stored(session_id: str) -> tuple[list, dict]:
    """The session's question batches, and the tool result the model got (as JSON)."""
    with SessionStore.open() as store:
        batches = store.question_batches(session_id)
        messages = store.load_session(session_id).messages
    tool = [message for message in messages if message["role"] == "tool"]
    assert len(tool) == 1, messages
    return batches, json.loads(tool[0]["content"])


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_2026_a_resumed_run_re_asks_the_form_and_retries_with_the_stored_state(
        tmp_path, signum):
    setup = Setup(tmp_path)
    asked = killed_while_the_form_is_up(setup, signum)
    session_id = asked["session_id"]
    (first,) = setup.rounds()  # the round that asked, in the first server process
    (minted,) = setup.rounds("result")
    assert first["state_in"] is None and minted["state_out"]

    result = resumed(setup, session_id)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "deployed"
    assert "MCP_STATE_REFUSED" not in result.stderr

    batches, answer = stored(session_id)
    assert answer == ANSWERED
    (batch,) = batches  # the same row, re-asked and answered
    assert batch.rpc_id == asked["rpc_id"] and batch.status == "answered"
    assert [q["id"] for q in batch.request["questions"]] == list(ANSWERS)
    sealed = batch.continuation["round"]["requestState"]
    assert sealed.startswith("v1.") and sealed != minted["state_out"]  # as the wire had it

    # the server's side: a new process, whose only round was the retry of the stored one
    later = [line for line in setup.rounds() if line["pid"] != first["pid"]]
    assert len(later) == 1, later
    (retry,) = later
    assert retry["state_in"] == minted["state_out"]  # it unsealed the stored bytes
    assert retry["responses"] == ["deploy:approval", "deploy:target"]
    (done,) = [line for line in setup.rounds("result") if line["pid"] == retry["pid"]]
    assert done["state_out"] is None  # answered: the tool ran


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_session_era_a_resumed_run_re_asks_the_form_and_calls_the_tool_again(
        tmp_path, signum):
    setup = Setup(tmp_path, legacy=True)
    asked = killed_while_the_form_is_up(setup, signum)
    session_id = asked["session_id"]
    assert [q["id"] for q in asked["questions"]] == ["env", "replicas"]  # one form at a time

    result = resumed(setup, session_id.removeprefix("s_"))  # a prefix names it too
    assert result.returncode == 0, result.stderr

    batches, answer = stored(session_id)
    assert answer == ANSWERED
    # the first form re-asked under its rpc_id, the second asked afresh
    assert [(batch.rpc_id == asked["rpc_id"], batch.status) for batch in batches] == [
        (True, "answered"), (False, "answered")]
    assert all(batch.continuation is None for batch in batches)  # nothing to retry
    calls = setup.rounds()  # the tool was called again by the new process, from scratch
    assert len({line["pid"] for line in calls}) == 2 and len(calls) == 2
    assert all(line["state_in"] is None and line["responses"] == [] for line in calls)


def test_a_server_that_refuses_the_stored_state_gets_the_call_afresh_and_one_ask(tmp_path):
    """A restarted server under the SDK's process-local key cannot read the old state: dsh
    says so in one line, calls afresh, and the answer just given settles the same form."""
    setup = Setup(tmp_path, keyed=False)
    asked = killed_while_the_form_is_up(setup, signal.SIGKILL)
    session_id = asked["session_id"]
    (first,) = setup.rounds()

    process = subprocess.Popen(setup.command("--jsonl", "--resume", session_id),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    requested = []
    try:
        for line in process.stdout:
            event = json.loads(line)
            if event["type"] == "question/requested":
                requested.append(event)
                process.stdin.write(json.dumps({
                    "type": "question/answer", "rpc_id": event["rpc_id"],
                    "session_id": event["session_id"], "answers": FRAME_ANSWERS}) + "\n")
                process.stdin.flush()
            elif event["type"] == "turn/completed":
                process.stdin.close()
        assert process.wait(CEILING) == 0
        stderr = process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
    assert [event["rpc_id"] for event in requested] == [asked["rpc_id"]]  # asked once
    assert requested[0]["questions"] == asked["questions"]
    refused = [line for line in stderr.splitlines() if "MCP_STATE_REFUSED" in line]
    assert refused == [
        "dsh: MCP_STATE_REFUSED: forms refused the stored state of deploy (Invalid or "
        "expired requestState); calling it afresh with the answers given"], stderr

    batches, answer = stored(session_id)
    assert answer == ANSWERED
    assert [(batch.rpc_id, batch.status) for batch in batches] == [(asked["rpc_id"],
                                                                    "answered")]
    later = [line for line in setup.rounds() if line["pid"] != first["pid"]]
    # the refused retry never reached the tool; then a fresh call and its answered round
    assert [line["state_in"] is None for line in later] == [True, False]
    assert later[0]["responses"] == [] and later[1]["responses"] == [
        "deploy:approval", "deploy:target"]
