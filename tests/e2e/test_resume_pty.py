"""Kill dsh while a question is on screen, resume the session, answer: nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pexpect
import pytest
from harness.conversation import assert_well_formed
from harness.dsh_under_test import DSH

from dsh_cli.store import SessionStore

pytestmark = pytest.mark.pty

DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
SCRIPT = {"turns": [
    {"content": "Let me ask.", "tool_calls": [{"name": "ask_user_question",
                                               "arguments": {"questions": [DB]}}]},
    {"content": "Done: using your choice."},
]}


def _dsh() -> list[str]:
    return [DSH]


def _env() -> dict[str, str]:
    # pexpect answers no cursor-position request; without this the UI waits for one
    return {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1"}


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return f"script:{path}"


def _kill_while_asking(model: str, dsh_home) -> tuple[str, str]:
    """Start a run in a pty, SIGKILL it once the question is drawn; (session, rpc_id)."""
    command, *args = _dsh()
    child = pexpect.spawn(command, [*args, "run", "--model", model, "go"], env=_env(),
                          encoding="utf-8", timeout=20, dimensions=(24, 80))
    try:
        child.expect("Which database")
        child.kill(signal.SIGKILL)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.signalstatus == signal.SIGKILL
    with SessionStore.open(dsh_home / "sessions.db") as store:
        session_id = store.latest_session_id()
        [batch] = store.question_batches(session_id)
        record = store.load_session(session_id)
    assert batch.status == "pending"
    assert [m["role"] for m in record.messages] == ["user", "assistant"]
    assert record.pending_rpc_ids == {batch.call_id: batch.rpc_id}
    return session_id, batch.rpc_id


def _assert_complete(dsh_home, session_id: str, rpc_id: str) -> None:
    shown = subprocess.run([*_dsh(), "sessions", "show", session_id, "--json"],
                           capture_output=True, text=True, timeout=20, check=True)
    messages = json.loads(shown.stdout)["messages"]
    assert_well_formed(messages)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert json.loads(messages[2]["content"]) == {"answers": [{"id": "db",
                                                                "selected": ["SQLite"]}]}
    assert messages[3]["content"] == "Done: using your choice."
    with SessionStore.open(dsh_home / "sessions.db") as store:
        batches = store.question_batches(session_id)
        assert store.load_session(session_id).pending_rpc_ids == {}
    assert [(b.rpc_id, b.status) for b in batches] == [(rpc_id, "answered")]


def test_killed_run_resumes_under_the_same_rpc_id_over_jsonl(script, dsh_home):
    session_id, rpc_id = _kill_while_asking(script, dsh_home)
    resumed = subprocess.Popen(
        [*_dsh(), "run", "-r", session_id, "--model", script, "--jsonl"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    seen = []
    try:
        for line in resumed.stdout:
            event = json.loads(line)
            seen.append(event)
            if event["type"] == "question/requested":
                assert event["rpc_id"] == rpc_id and event["session_id"] == session_id
                frame = {"type": "question/answer", "rpc_id": rpc_id, "session_id": session_id,
                         "answers": [{"id": "db", "selected": ["SQLite"]}]}
                resumed.stdin.write(json.dumps(frame) + "\n")
                resumed.stdin.flush()
            elif event["type"] == "turn/completed":
                resumed.stdin.close()
        assert resumed.wait(timeout=20) == 0, resumed.stderr.read()
    finally:
        if resumed.poll() is None:
            resumed.kill()
    types = [event["type"] for event in seen]
    assert types.count("question/requested") == 1 and "turn/completed" in types
    _assert_complete(dsh_home, session_id, rpc_id)


def test_killed_run_continues_in_the_terminal(script, dsh_home):
    session_id, rpc_id = _kill_while_asking(script, dsh_home)
    command, *args = _dsh()
    child = pexpect.spawn(command, [*args, "run", "-c", "--model", script],
                          env=_env(), encoding="utf-8", timeout=20, dimensions=(24, 80))
    try:
        child.expect("Which database")
        child.send("2")
        child.expect("Done: using your choice.")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    _assert_complete(dsh_home, session_id, rpc_id)
