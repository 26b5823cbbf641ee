"""``delivery: "async"`` across the process boundary: ``dsh run --jsonl``, ``--answers``, the
store after SIGKILL, and ``dsh run -c`` taking up a stored batch (docs/async-questions.md)."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

WAIT = 20
NOTES = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_notes_server.py")
ASYNC_DB = {"questions": [{"id": "db", "question": "Which database later?",
                           "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}],
            "delivery": "async"}


class Controller:
    """Frames in, one parsed event per stdout line out."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [DSH, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding="utf-8", env=dict(os.environ))
        self.events: list[dict] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, frame: dict) -> None:
        self.process.stdin.write(json.dumps(frame) + "\n")
        self.process.stdin.flush()

    def next(self) -> dict | None:
        line = self._lines.get(timeout=WAIT)
        if line is None:
            return None
        event = json.loads(line)
        self.events.append(event)
        return event

    def until(self, kind: str, **fields: object) -> dict:
        while (event := self.next()) is not None:
            if event["type"] == kind and all(event.get(k) == v for k, v in fields.items()):
                return event
        raise AssertionError(f"stdout ended before {kind}: {self.events}")

    def finish(self) -> tuple[int, str]:
        self.process.stdin.close()
        while self.next() is not None:
            pass
        status = self.process.wait(timeout=WAIT)
        return status, self.process.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def controller():
    started: list[Controller] = []

    def start(*args: str) -> Controller:
        started.append(Controller(*args))
        return started[-1]

    yield start
    for each in started:
        each.kill()


def script(tmp_path: Path, *turns: dict) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"script:{path}"


def notes_config(tmp_path: Path) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [NOTES]}}}))
    return str(path)


def stored(name: str, session_id: str) -> list[dict]:
    """The session's messages as ``dsh sessions show --json`` prints them."""
    shown = subprocess.run([DSH, "sessions", "show", "--json", session_id],
                           capture_output=True, text=True, timeout=WAIT, check=True)
    return json.loads(shown.stdout)[name]


def later_rows() -> list[tuple]:
    db = Path(os.environ["DSH_HOME"]) / "data" / "sessions.db"
    found = list(Path(os.environ["DSH_HOME"]).rglob("sessions.db"))
    db = found[0] if found else db
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT rpc_id, async_outcome FROM questions WHERE delivery = 'async' "
            "AND delivered_at IS NULL ORDER BY created_at").fetchall()


def test_jsonl_async_question_another_tool_then_the_answer_as_a_message(controller, tmp_path):
    model = script(tmp_path,
                   {"tool_calls": [{"id": "ask", "name": "ask_user_question",
                                    "arguments": ASYNC_DB}]},
                   {"tool_calls": [{"id": "notes", "name": "mcp__notes__read_notes",
                                    "arguments": {}}]},
                   {"content": "working on the rest"},
                   {"content": "thanks, SQLite it is"})
    dsh = controller("run", "--jsonl", "--yes", "--model", model,
                     "--mcp-config", notes_config(tmp_path), "start")
    session_id = dsh.until("session/started")["session_id"]
    requested = dsh.until("question/requested")
    assert requested["delivery"] == "async" and requested["call_id"] == "ask"
    accepted = dsh.until("tool/result", call_id="ask")
    assert accepted["error"] is None
    assert json.loads(accepted["content"]) == {"accepted": True, "ticket": requested["rpc_id"]}
    notes = dsh.until("tool/result", call_id="notes")  # the model went on working
    assert notes["error"] is None
    dsh.until("turn/completed")
    assert dsh.process.poll() is None  # idle, the batch still pending
    dsh.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
              "session_id": session_id, "answers": [{"id": "db", "selected": ["SQLite"]}]})
    assert dsh.until("response/ack")["accepted"] is True
    dsh.until("turn/completed")  # the answer started a turn of its own
    assert dsh.events[-2]["content"] == "thanks, SQLite it is"
    # a second answer to the same ticket loses: first wins
    dsh.send({"type": "question/cancel", "rpc_id": requested["rpc_id"]})
    refused = dsh.until("response/ack")
    assert (refused["accepted"], refused["reason"]) == (False, "not-pending")
    status, stderr = dsh.finish()
    assert status == 0, stderr
    assert "still pending" not in stderr
    messages = stored("messages", session_id)
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user",
                     "assistant"]
    delivered = messages[6]["content"]
    assert requested["rpc_id"] in delivered
    payload = json.loads(delivered[delivered.index("{"):])
    assert payload == {"ticket": requested["rpc_id"],
                       "answers": [{"id": "db", "selected": ["SQLite"]}]}
    assert later_rows() == []  # delivered: nothing left to resume


def test_answers_file_answer_arrives_before_the_next_model_call(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["PostgreSQL"]}))
    model = script(tmp_path,
                   {"tool_calls": [{"id": "ask", "name": "ask_user_question",
                                    "arguments": ASYNC_DB}]},
                   {"tool_calls": [{"id": "notes", "name": "mcp__notes__read_notes",
                                    "arguments": {}}]},
                   {"content": "done"})
    run = subprocess.run([DSH, "run", "--yes", "--answers", str(answers), "--model", model,
                          "--mcp-config", notes_config(tmp_path), "go"],
                         capture_output=True, text=True, timeout=WAIT * 2)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"
    session_id = json.loads(subprocess.run(
        [DSH, "sessions", "list", "--json"], capture_output=True, text=True,
        timeout=WAIT).stdout)[0]["id"]
    messages = stored("messages", session_id)
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert len(users) == 2 and '"selected":["PostgreSQL"]' in users[1]
    assert messages[-1] == {"role": "assistant", "content": "done"} or \
        messages[-1]["content"] == "done"


def test_answers_file_answer_is_in_the_very_next_model_call_not_the_one_after(tmp_path):
    """docs/async-questions.md: the answer reaches the model before its next call; the
    model's second call (its final answer) already has it."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    model = script(tmp_path,
                   {"tool_calls": [{"id": "ask", "name": "ask_user_question",
                                    "arguments": ASYNC_DB}]},
                   {"content": "SQLite it is"},
                   {"content": "a call too many"})
    run = subprocess.run([DSH, "run", "--answers", str(answers), "--model", model, "go"],
                         capture_output=True, text=True, timeout=WAIT * 2)
    assert (run.returncode, run.stdout) == (0, "SQLite it is\n"), run.stderr
    session_id = json.loads(subprocess.run(
        [DSH, "sessions", "list", "--json"], capture_output=True, text=True,
        timeout=WAIT).stdout)[0]["id"]
    messages = stored("messages", session_id)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert '"selected":["SQLite"]' in messages[3]["content"]
    assert messages[4]["content"] == "SQLite it is"


def test_run_ending_with_open_batches_says_so_and_they_survive_sigkill(controller, tmp_path):
    turns = [{"tool_calls": [{"id": "ask", "name": "ask_user_question",
                              "arguments": ASYNC_DB}]},
             {"content": "carrying on without it"},
             {"content": "now I know: PostgreSQL"}]
    model = script(tmp_path, *turns)
    dsh = controller("run", "--jsonl", "--model", model, "start")
    session_id = dsh.until("session/started")["session_id"]
    requested = dsh.until("question/requested")
    dsh.until("turn/completed")
    dsh.process.send_signal(signal.SIGKILL)  # nothing runs on the way out
    dsh.process.wait(timeout=WAIT)
    assert later_rows() == [(requested["rpc_id"], None)]
    # resumed: the same ticket is asked again; stdin ends unanswered: the line, exit 0
    again = controller("run", "--jsonl", "--model", model, "-r", session_id)
    replayed = again.until("question/requested")
    assert (replayed["rpc_id"], replayed["delivery"]) == (requested["rpc_id"], "async")
    status, stderr = again.finish()
    assert status == 0, stderr
    assert f"1 async question batch still pending ({requested['rpc_id']})" in stderr
    assert later_rows() == [(requested["rpc_id"], None)]  # kept for the next resume
    # and answered at last: the resumed model turn gets it as a message
    third = controller("run", "--jsonl", "--model", model, "-r", session_id)
    replayed = third.until("question/requested")
    third.send({"type": "question/answer", "rpc_id": replayed["rpc_id"],
                "session_id": session_id, "answers": [{"id": "db", "selected": ["PostgreSQL"]}]})
    third.until("turn/completed")
    status, stderr = third.finish()
    assert status == 0 and "still pending" not in stderr, stderr
    assert later_rows() == []
    last = stored("messages", session_id)[-2:]
    assert last[0]["role"] == "user" and requested["rpc_id"] in last[0]["content"]
    assert last[1]["content"] == "now I know: PostgreSQL"


def _store_at_schema_12_with_two_async_batches() -> None:
    """A store as dsh at schema 12 left it: one session with two async batches in both its
    tables, ``q_open`` still open and ``q_done`` answered (SQLite) but not yet delivered."""
    from dsh_cli.config import data_dir
    from dsh_cli.store.migrations import MIGRATIONS, migrate

    path = data_dir() / "sessions.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, path, MIGRATIONS[:12])
    stamp = "2026-01-01T00:00:00Z"
    request = json.dumps({"questions": ASYNC_DB["questions"]})
    calls = [{"id": call, "type": "function",
              "function": {"name": "ask_user_question", "arguments": json.dumps(ASYNC_DB)}}
             for call in ("ask_open", "ask_done")]
    done = {"type": "question/resolved", "rpc_id": "q_done", "outcome": "answered",
            "answer": {"answers": [{"id": "db", "selected": ["SQLite"]}]}}
    with db:
        db.execute("INSERT INTO sessions (id, model, title, created_at, updated_at) "
                   "VALUES ('s_old', 'demo', 'start', ?, ?)", (stamp, stamp))
        db.executemany("INSERT INTO messages (session_id, role, content, tool_calls, "
                       "tool_call_id, created_at) VALUES ('s_old', ?, ?, ?, ?, ?)", [
                           ("user", "start", None, None, stamp),
                           ("assistant", "", json.dumps(calls), None, stamp),
                           ("tool", '{"accepted":true,"ticket":"q_open"}', None, "ask_open",
                            stamp),
                           ("tool", '{"accepted":true,"ticket":"q_done"}', None, "ask_done",
                            stamp),
                           ("assistant", "carrying on", None, None, stamp)])
        for rpc_id, call, status, answer, outcome in (
                ("q_open", "ask_open", "aborted", None, None),
                ("q_done", "ask_done", "answered", json.dumps(done["answer"]),
                 json.dumps(done))):
            db.execute("INSERT INTO questions (rpc_id, session_id, call_id, request, status, "
                       "answer, created_at, updated_at) VALUES (?, 's_old', ?, ?, ?, ?, ?, ?)",
                       (rpc_id, call, request, status, answer, stamp, stamp))
            db.execute("INSERT INTO later_questions (ticket, session_id, call_id, request, "
                       "outcome, created_at) VALUES (?, 's_old', ?, ?, ?, ?)",
                       (rpc_id, call, request, outcome, stamp))
    db.close()


def test_a_schema_12_stores_open_and_settled_async_batches_are_taken_up_at_13(
        controller, tmp_path):
    """Migration 13 moves ``later_questions`` into ``questions``: on resume the settled
    batch's outcome reaches the model at once, the open one is asked again under its
    ticket, and once answered neither is left to resume."""
    _store_at_schema_12_with_two_async_batches()
    model = script(tmp_path, {"content": "unused: the stored turn"},
                   {"content": "unused: carrying on"},
                   {"content": "SQLite noted"}, {"content": "PostgreSQL noted"})
    dsh = controller("run", "--jsonl", "--model", model, "-r", "s_old")
    seen: set[tuple] = set()  # the replay and the delivered outcome's turn, in either order
    while len(seen) < 3:
        event = dsh.next()
        assert event is not None, dsh.events
        if event["type"] == "question/requested":
            seen.add((event["rpc_id"], event["delivery"]))
        elif event["type"] in ("assistant/message", "turn/completed"):
            seen.add((event["type"], event.get("content")))
    assert seen == {("q_open", "async"), ("assistant/message", "SQLite noted"),
                    ("turn/completed", None)}
    dsh.send({"type": "question/answer", "rpc_id": "q_open", "session_id": "s_old",
              "answers": [{"id": "db", "selected": ["PostgreSQL"]}]})
    dsh.until("assistant/message", content="PostgreSQL noted")
    dsh.until("turn/completed")
    status, stderr = dsh.finish()
    assert status == 0 and "still pending" not in stderr, stderr
    assert later_rows() == []
    delivered = [m["content"] for m in stored("messages", "s_old") if m["role"] == "user"][1:]
    assert len(delivered) == 2
    assert "q_done" in delivered[0] and '"selected":["SQLite"]' in delivered[0]
    assert "q_open" in delivered[1] and '"selected":["PostgreSQL"]' in delivered[1]
    with sqlite3.connect(next(Path(os.environ["DSH_HOME"]).rglob("sessions.db"))) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (13,)
        assert db.execute("SELECT rpc_id, delivery, delivered_at IS NOT NULL FROM questions "
                          "ORDER BY rpc_id").fetchall() == [("q_done", "async", 1),
                                                            ("q_open", "async", 1)]
