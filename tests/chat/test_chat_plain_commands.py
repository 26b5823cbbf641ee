"""`dsh chat --plain`: a chat command typed at a question is a command, never an Other
answer; ``/pending`` at a re-asked async batch lists what waits, and the batch is asked
again."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH

LATER = {"questions": [{"id": "db", "question": "Which database later?",
                        "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}],
         "delivery": "async"}


def script(tmp_path) -> str:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"turns": [
        {"tool_calls": [{"id": "ask", "name": "ask_user_question", "arguments": LATER}]},
        {"content": "working on"},
        {"content": "SQLite noted"}]}))
    return f"script:{path}"


def stored_users() -> list[str]:
    listed = subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                            text=True, timeout=60)
    session = json.loads(listed.stdout)[0]["id"]
    shown = json.loads(subprocess.run([DSH, "sessions", "show", session, "--json"],
                                      capture_output=True, text=True, timeout=60).stdout)
    return [m["content"] for m in shown["messages"] if m["role"] == "user"]


def test_pending_at_a_re_asked_batch_lists_it_and_the_batch_is_asked_again(tmp_path):
    # drawn at the turn's end, left with /discuss, re-asked with /answer: /pending there
    lines = "go\n/discuss\n/answer\n/pending\n/new\n/cancel q_x\n2\n/exit\n"
    done = subprocess.run([DSH, "chat", "--plain", "-m", script(tmp_path)], input=lines,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stderr  # the questions and their prompts; the transcript is on stdout
    prompt = "answer (numbers, text for Other, /skip, /back, /cancel)> "
    ticket = done.stdout.split("ticket ", 1)[1].split()[0]
    assert f"{prompt}/pending\n  {ticket}  Which database later? (this one)\n{prompt}" in out
    assert (f"{prompt}/new\n  /new works at the chat prompt: answer these questions first, "
            "or /discuss to leave them\n") in out
    assert f"{prompt}/cancel q_x\n  /cancel works at the chat prompt" in out
    assert "SQLite noted" in done.stdout and "new session" not in done.stdout
    users = stored_users()
    assert users[0] == "go" and len(users) == 2
    answer = json.loads(users[1][users[1].index("{"):])
    assert answer == {"ticket": ticket, "answers": [{"id": "db", "selected": ["SQLite"]}]}
