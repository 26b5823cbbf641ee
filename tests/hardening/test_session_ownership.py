"""The store across real processes: one owner per session, a dead owner's lock taken
over, a reused tool-call id resumed under its own rpc_id, symlinked store files refused."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess

from harness.conversation import assert_well_formed
from harness.dsh_under_test import DSH, REAL_DSH

from dsh_cli.store import SessionStore

DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}


def _ask(call_id: str | None = None) -> dict:
    call = {"name": "ask_user_question", "arguments": {"questions": [DB]}}
    return {**call, "id": call_id} if call_id else call


def _script(tmp_path, *turns: dict) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": list(turns)}), encoding="utf-8")
    return f"script:{path}"


def _jsonl(model: str, *args: str, real_start: bool = False) -> subprocess.Popen:
    """``real_start``: the dsh's own pid is the child's (a fork server's dsh has another)."""
    return subprocess.Popen([REAL_DSH if real_start else DSH, "run", "--model", model,
                             "--jsonl", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _until_question(child: subprocess.Popen, answer_first: int = 0) -> dict:
    """Read events until a question is pending (answering the first ``answer_first``)."""
    for line in child.stdout:
        event = json.loads(line)
        if event["type"] != "question/requested":
            continue
        if answer_first:
            answer_first -= 1
            frame = {"type": "question/answer", "rpc_id": event["rpc_id"],
                     "session_id": event["session_id"],
                     "answers": [{"id": "db", "selected": ["SQLite"]}]}
            child.stdin.write(json.dumps(frame) + "\n")
            child.stdin.flush()
            continue
        return event
    raise AssertionError(f"no question: {child.stderr.read()}")


def _kill(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=20)


def _answers(tmp_path) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"db": ["SQLite"]}), encoding="utf-8")
    return str(path)


def test_a_second_process_on_a_live_session_is_session_busy_and_a_killed_owner_is_taken_over(
        tmp_path, dsh_home):
    model = _script(tmp_path, {"content": "Asking.", "tool_calls": [_ask()]},
                    {"content": "Done."})
    owner = _jsonl(model, "hi", real_start=True)
    try:
        event = _until_question(owner)
        second = subprocess.run([DSH, "run", "-c", "--model", model, "--answers",
                                 _answers(tmp_path)], capture_output=True, text=True,
                                timeout=60, stdin=subprocess.DEVNULL)
        assert second.returncode == 1
        assert second.stderr == (
            f"dsh: SESSION_BUSY: session {event['session_id']} is in use by process "
            f"{owner.pid}; wait for it to finish, or continue another session\n")
        assert second.stdout == ""
    finally:
        _kill(owner)
    taken = subprocess.run([DSH, "run", "-c", "--model", model, "--answers",
                            _answers(tmp_path)], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    assert taken.returncode == 0, taken.stderr
    assert taken.stdout == "Done.\n"
    with SessionStore.open() as store:
        record = store.load_session(event["session_id"])
    assert_well_formed(record.messages)
    assert [m["role"] for m in record.messages] == ["user", "assistant", "tool", "assistant"]


def test_a_session_is_free_again_once_its_owner_exits(tmp_path, dsh_home):
    model = _script(tmp_path, {"content": "One."}, {"content": "Two."}, {"content": "Three."})
    for prompt, expected in (("a", "One.\n"), ("b", "Two.\n"), ("c", "Three.\n")):
        args = [] if prompt == "a" else ["-c"]
        result = subprocess.run([DSH, "run", *args, "--model", model, "--no-input", prompt],
                                capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert (result.returncode, result.stdout, result.stderr) == (0, expected, "")
    assert not any((dsh_home / "sessions-locks").iterdir())  # each owner removed its file


def test_a_tool_call_id_reused_in_a_later_turn_resumes_under_its_own_rpc_id(tmp_path, dsh_home):
    model = _script(tmp_path, {"content": "First.", "tool_calls": [_ask("call_same")]},
                    {"content": "Again.", "tool_calls": [_ask("call_same")]},
                    {"content": "Done."})
    first = _jsonl(model, "hi")
    try:
        event = _until_question(first, answer_first=1)  # the second turn's question
    finally:
        _kill(first)
    resumed = _jsonl(model, "-c")
    seen = []
    try:
        for line in resumed.stdout:
            item = json.loads(line)
            seen.append(item)
            if item["type"] == "question/requested":
                frame = {"type": "question/answer", "rpc_id": item["rpc_id"],
                         "session_id": item["session_id"],
                         "answers": [{"id": "db", "selected": ["PostgreSQL"]}]}
                resumed.stdin.write(json.dumps(frame) + "\n")
                resumed.stdin.flush()
            elif item["type"] == "turn/completed":
                resumed.stdin.close()
        assert resumed.wait(timeout=30) == 0, resumed.stderr.read()
    finally:
        if resumed.poll() is None:
            resumed.kill()
    asked = [item["rpc_id"] for item in seen if item["type"] == "question/requested"]
    assert asked == [event["rpc_id"]]
    with SessionStore.open() as store:
        batches = store.question_batches(event["session_id"])
        record = store.load_session(event["session_id"])
    assert [batch.status for batch in batches] == ["answered", "answered"]  # none left open
    assert_well_formed(record.messages)


def _refused(result: subprocess.CompletedProcess, link) -> None:
    assert result.returncode == 1
    assert result.stderr.startswith(f"dsh: STORE_ERROR: session store {link}: it is a "
                                    "symbolic link"), result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_dangling_store_symlink_is_refused_and_its_target_never_created(tmp_path, dsh_home):
    target = tmp_path / "elsewhere.db"
    link = dsh_home / "sessions.db"
    link.symlink_to(target)
    for args in (["sessions", "list"], ["run", "--model", "demo", "--no-input", "hi"]):
        _refused(subprocess.run([DSH, *args], capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL), link)
    assert not target.exists() and link.is_symlink()


def test_a_symlink_to_another_programs_database_is_refused_and_it_is_left_alone(
        tmp_path, dsh_home):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE theirs (x)")
    before = other.read_bytes()
    (dsh_home / "sessions.db").symlink_to(other)
    result = subprocess.run([DSH, "run", "--model", "demo", "--no-input", "hi"],
                            capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    _refused(result, dsh_home / "sessions.db")
    assert other.read_bytes() == before


def test_a_symlinked_write_ahead_log_is_refused_too(tmp_path, dsh_home):
    with SessionStore.open():
        pass
    (dsh_home / "sessions.db-wal").unlink(missing_ok=True)
    (dsh_home / "sessions.db-wal").symlink_to(tmp_path / "wal")
    result = subprocess.run([DSH, "sessions", "list"], capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    _refused(result, dsh_home / "sessions.db-wal")
    assert not (tmp_path / "wal").exists()
    os.unlink(dsh_home / "sessions.db-wal")
