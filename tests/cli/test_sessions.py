"""``dsh sessions list | show | rm``: JSON shapes, readable output, clean errors."""

from __future__ import annotations

import json

from click.testing import CliRunner
from harness.dsh_under_test import DSH

from dsh_cli.cli import main
from dsh_cli.core.events import AssistantMessage, EventStream, QuestionRequested, UserMessage
from dsh_cli.store import SessionStore


def invoke(*args):
    return CliRunner().invoke(main, ["sessions", *args])


def seed(*, title="pick a database"):
    """A session with an open question, as a crashed run leaves it."""
    with SessionStore.open() as store:
        session_id = store.create_session("deepseek-chat", system="Be brief.")
        events = EventStream()
        store.record(events, session_id)
        events.emit(UserMessage(title))
        events.emit(AssistantMessage("Let me \x1b[2Jask.", [
            {"id": "c1", "name": "ask_user_question", "arguments": '{"questions": []}'}]))
        events.emit(QuestionRequested("q_abc", session_id, "c1", [{"id": "db", "question": "?"}]))
    return session_id


def test_list_json_shape():
    first = seed(title="first")
    second = seed(title="second")
    result = invoke("list", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [row["id"] for row in rows] == [second, first]
    assert all(set(row) == {"id", "created_at", "updated_at", "model", "title", "kind", "agent",
                            "cwd"} for row in rows)
    assert rows[1]["title"] == "first" and rows[1]["model"] == "deepseek-chat"


def test_list_json_when_empty():
    result = invoke("list", "--json")
    assert result.exit_code == 0
    assert json.loads(result.output) == []


def test_list_table_is_sanitised():
    session_id = seed(title="evil \x1b]0;owned\x07title\u202e")
    result = invoke("list")
    assert result.exit_code == 0
    header, row = result.output.splitlines()
    assert header.split() == ["ID", "UPDATED", "KIND", "MODEL/AGENT", "TITLE"]
    assert row.startswith(session_id) and row.endswith("evil title")
    assert "\x1b" not in result.output and "\u202e" not in result.output


def test_show_json_has_the_messages_in_chat_format():
    session_id = seed()
    result = invoke("show", session_id, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"id", "created_at", "updated_at", "model", "title", "messages",
                         "permissions"}
    assert data["permissions"] == []
    assert data["messages"][0] == {"role": "system", "content": "Be brief."}
    assert data["messages"][2]["tool_calls"] == [{
        "id": "c1", "type": "function",
        "function": {"name": "ask_user_question", "arguments": '{"questions": []}'}}]


def test_show_transcript_is_readable_and_safe():
    session_id = seed()
    result = invoke("show", session_id[:-2])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"session {session_id}" in out
    assert "user:\n  pick a database" in out
    assert "Let me ask." in out and "\x1b" not in out
    assert "-> ask_user_question" in out
    assert "question q_abc: pending" in out
    assert f"dsh run -r {session_id}" in out


def test_rm_then_show_fails_cleanly():
    session_id = seed()
    result = invoke("rm", session_id, "--json")
    assert result.exit_code == 0
    assert json.loads(result.output) == {"id": session_id, "deleted": True}
    result = invoke("show", session_id)
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"dsh: SESSION_NOT_FOUND: session {session_id} does not exist; see `dsh sessions list`")


def test_rm_human_output():
    session_id = seed()
    result = invoke("rm", session_id)
    assert result.exit_code == 0
    assert result.output == f"Deleted session {session_id}\n"
    assert json.loads(invoke("list", "--json").output) == []


def test_corrupt_store_is_one_line_not_a_traceback(dsh_home):
    (dsh_home / "sessions.db").write_bytes(b"garbage " * 1000)
    result = invoke("list")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("dsh: STORE_ERROR: session store ")
    assert str(dsh_home / "sessions.db") in lines[0]
    assert "Traceback" not in result.output


def test_importing_the_command_does_not_import_sqlite():
    import subprocess
    import sys

    code = ("import sys, dsh_cli.cli.sessions; "
            "print('sqlite3' in sys.modules, 'dsh_cli.store' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


def test_show_json_on_a_terminal_escapes_stored_control_characters():
    import os

    import pexpect

    with SessionStore.open() as store:
        session_id = store.create_session("demo")
        events = EventStream()
        store.record(events, session_id)
        events.emit(AssistantMessage("evil \u009b31m red \u202e backwards"))
    child = pexpect.spawn(DSH, ["sessions", "show", session_id, "--json"],
                          env=dict(os.environ), encoding="utf-8", timeout=10)
    child.expect(pexpect.EOF)
    output = child.before
    assert "\u009b" not in output and "\u202e" not in output
    assert "\\u009b31m" in output and "\\u202e" in output
