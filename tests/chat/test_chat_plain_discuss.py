"""`dsh chat --plain`: /discuss leaves the model's batch to talk about it (ASK_DISCUSS)."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH

QUESTIONS = {"questions": [{"id": "db", "question": "Which database?",
                            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}


def script(tmp_path) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "ask_user_question", "arguments": QUESTIONS}]},
        {"content": "Sure, what would you like to know?"},
        {"content": "PostgreSQL scales further."}]}))
    return f"script:{path}"


def test_slash_discuss_leaves_the_batch_and_the_next_message_reaches_the_model(tmp_path):
    done = subprocess.run([DSH, "chat", "--plain", "-m", script(tmp_path)],
                          input="set it up\n/discuss\nwhich one scales?\n", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "(/discuss leaves these questions to talk about them first)" in out
    assert "PostgreSQL scales further." in out
    listed = subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                            text=True, timeout=60)
    session = json.loads(listed.stdout)[0]["id"]
    shown = json.loads(subprocess.run([DSH, "sessions", "show", session, "--json"],
                                      capture_output=True, text=True, timeout=60).stdout)
    tool = next(m for m in shown["messages"] if m["role"] == "tool")
    assert json.loads(tool["content"])["error"]["code"] == "ASK_DISCUSS"
    users = [m["content"] for m in shown["messages"] if m["role"] == "user"]
    assert users == ["set it up", "which one scales?"]


def test_dsh_run_plain_has_no_conversation_to_discuss_in(tmp_path):
    done = subprocess.run([DSH, "run", "--plain", "-m", script(tmp_path), "set it up"],
                          input="/discuss\n2\n", capture_output=True, text=True, timeout=60)
    assert "/discuss leaves" not in done.stderr
    assert "ASK_DISCUSS" not in done.stdout + done.stderr
