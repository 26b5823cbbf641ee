"""``dsh chat --mcp-config`` with an OpenAI-compatible model, in a pseudo-terminal: the model
calls an MCP tool, the permission prompt is drawn, a key answers it, the result reaches it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pexpect
import pytest
from fakes.openai_server import Reply
from harness.dsh_under_test import DSH

pytestmark = pytest.mark.pty

NOTES = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_notes_server.py")


def test_chat_asks_permission_for_an_mcp_tool_and_runs_it_when_allowed(tmp_path, server):
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [NOTES]}}}))
    server.enqueue(Reply.tool_calls([("mcp__notes__write_note", {"text": "buy milk"})],
                                    content="Saving it."))
    server.enqueue(Reply.text("The note is saved."))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1",
               DSH_API_KEY="sk-test")
    child = pexpect.spawn(DSH, ["chat", "-m", "fake-model", "--base-url", server.base_url,
                                "--mcp-config", str(config)],
                          env=env, encoding="utf-8", dimensions=(40, 100), timeout=20)
    child.expect("›")
    child.send("remember to buy milk\r")
    child.expect("Permission · notes wants to run mcp__notes__write_note")
    child.expect("allow once")
    child.send("2")  # allow for this session
    child.expect("✓ mcp__notes__write_note allowed for this session")
    child.expect("· mcp__notes__write_note → saved note 1: buy milk")
    child.expect("The note is saved.")
    child.expect("›")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    offered = [tool["function"]["name"] for tool in server.requests[0].body["tools"]]
    assert "mcp__notes__write_note" in offered and "ask_user_question" in offered
    result = server.requests[1].body["messages"][-1]
    assert result["role"] == "tool" and result["content"] == "saved note 1: buy milk"


def test_a_denial_is_reported_once_in_the_transcript(tmp_path, server):
    import io

    import pyte

    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [NOTES]}}}))
    server.enqueue(Reply.tool_calls([("mcp__notes__write_note", {"text": "buy milk"})],
                                    content="Saving it."))
    server.enqueue(Reply.text("Understood, not saved."))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1",
               DSH_API_KEY="sk-test")
    child = pexpect.spawn(DSH, ["chat", "-m", "fake-model", "--base-url", server.base_url,
                                "--mcp-config", str(config)],
                          env=env, encoding="utf-8", dimensions=(40, 60), timeout=20)
    child.logfile_read = seen = io.StringIO()
    child.expect("›")
    child.send("remember to buy milk\r")
    child.expect("4 deny")
    child.send("4")
    child.expect("Understood, not saved.")
    child.expect("›")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    screen = pyte.Screen(60, 40)
    pyte.Stream(screen).feed(seen.getvalue())
    lines = [line.strip() for line in screen.display if "write_note" in line]
    assert lines == ["✗ mcp__notes__write_note denied"]
