"""A controller that stops reading: `dsh run --jsonl` with a 2 MB assistant message and a
stdout pipe nobody drains. Question timeouts still fire, a signal still ends the process
with its status (the session saved), and a controller silent past its bound is gone."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from harness.dsh_under_test import DSH
from relay_peer import WAIT, Peer, asking, script

BIG = "x" * 2_000_000  # far more than a pipe holds (64 KiB)


def _sessions() -> list[dict]:
    listed = subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                            text=True, timeout=WAIT, check=True)
    return json.loads(listed.stdout)


def _messages() -> list[dict]:
    sessions = _sessions()
    if not sessions:
        return []
    shown = subprocess.run([DSH, "sessions", "show", sessions[0]["id"], "--json"],
                           capture_output=True, text=True, timeout=WAIT, check=True)
    return json.loads(shown.stdout)["messages"]


def _tool_result(deadline: float) -> dict | None:
    """The first stored tool message, polled until ``deadline`` (monotonic)."""
    while time.monotonic() < deadline:
        tools = [m for m in _messages() if m["role"] == "tool"]
        if tools:
            return json.loads(tools[0]["content"])
        time.sleep(0.2)
    return None


@pytest.fixture
def unread(tmp_path):
    """Start `dsh run --jsonl` whose stdout is never read; the peer is killed at the end."""
    started: list[Peer] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Peer:
        model = script(tmp_path / "s.json", asking(BIG), {"content": "Done."})
        peer = Peer("run", "--jsonl", "--model", model, *args, "hi", reading=False, env=env,
                    stderr=subprocess.DEVNULL)
        started.append(peer)
        return peer

    yield start
    for peer in started:
        peer.kill()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130),
                                                (signal.SIGHUP, 129)])
def test_a_full_stdout_pipe_lets_the_question_time_out_and_a_signal_end_the_run(
        unread, signum, status):
    dsh = unread("--question-timeout", "1")
    # nobody reads stdout: the question still times out, and the store says so
    result = _tool_result(time.monotonic() + WAIT)
    assert result is not None, "the question never timed out while stdout was full"
    assert result["error"]["code"] == "ASK_TIMEOUT"
    sent = time.monotonic()
    dsh.process.send_signal(signum)
    assert dsh.process.wait(timeout=WAIT) == status
    print(f"{signum.name} to exit with a full stdout pipe: {time.monotonic() - sent:.3f} s")
    stored = _messages()
    assert stored[0] == {"role": "user", "content": "hi"}
    assert stored[1]["role"] == "assistant" and stored[1]["content"] == BIG


def test_a_signal_ends_the_run_while_a_question_waits_behind_a_full_pipe(unread):
    dsh = unread()  # no question timeout: the batch stays pending
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and not [m for m in _messages()
                                                if m["role"] == "assistant"]:
        time.sleep(0.2)
    time.sleep(0.5)  # the batch is announced into the full pipe
    sent = time.monotonic()
    dsh.process.send_signal(signal.SIGTERM)
    assert dsh.process.wait(timeout=WAIT) == 143
    print(f"SIGTERM to exit, question pending behind a full pipe: "
          f"{time.monotonic() - sent:.3f} s")
    # the pending batch was kept resumable: `-c` asks it again
    assert [m["role"] for m in _messages()] == ["user", "assistant"]


def test_a_controller_that_reads_nothing_past_its_bound_is_gone_and_its_question_aborts(
        unread):
    dsh = unread(env={"DSH_CONTROLLER_TIMEOUT": "1"})
    result = _tool_result(time.monotonic() + WAIT)
    assert result is not None
    assert result["error"]["code"] == "ASK_ABORTED"
    assert result["error"]["message"] == ("the controller stopped reading (nothing was read "
                                          "for 1 s)")
    # stdin is still open, yet nobody is listening: the run ends once its turn completes
    assert dsh.process.wait(timeout=WAIT) == 0
    assert [m["role"] for m in _messages()] == ["user", "assistant", "tool", "assistant"]


def test_a_controller_that_reads_slowly_gets_every_event_in_order(tmp_path):
    model = script(tmp_path / "s.json", {"content": BIG})
    dsh = Peer("run", "--jsonl", "--model", model, "hi", reading=False,
               env={"DSH_CONTROLLER_TIMEOUT": "5"})
    try:
        time.sleep(1)  # less than the bound: a slow controller is not a gone one
        dsh.start_reading()
        assert dsh.finish() == 0
        kinds = [event["type"] for event in dsh.events]
        assert kinds[0] == "session/started" and kinds[-1] == "turn/completed"
        assert "".join(e["text"] for e in dsh.events if e["type"] == "assistant/delta") == BIG
    finally:
        dsh.kill()
