"""The permission prompt on a real pseudo-terminal: keys typed before it appeared grant
nothing, and "always" takes a second, deliberate key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest
from fakes.openai_server import Reply
from harness.dsh_under_test import DSH

pytestmark = [pytest.mark.pty,
              pytest.mark.skipif(DSH is None, reason="the dsh console script is not installed")]

NOTES = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_notes_server.py")


def _run(tmp_path, server) -> pexpect.spawn:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [NOTES]}}}))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1",
               DSH_API_KEY="sk-test")
    return pexpect.spawn(DSH, ["run", "-m", "fake-model", "--base-url", server.base_url,
                               "--mcp-config", str(config), "remember to buy milk"],
                         env=env, cwd=str(tmp_path), encoding="utf-8", dimensions=(30, 100),
                         timeout=20)


def _granted() -> str:
    return subprocess.run([DSH, "permissions", "list"], capture_output=True, text=True,
                          timeout=30).stdout


def test_a_three_typed_before_the_prompt_appears_grants_nothing(tmp_path, server):
    # the model takes 2 s to ask for the tool: the human types 3 meanwhile
    server.enqueue(Reply.tool_calls([("mcp__notes__write_note", {"text": "buy milk"})],
                                    delay=2.0))
    server.enqueue(Reply.text("Not saved."))
    child = _run(tmp_path, server)
    deadline = time.monotonic() + 20
    while not server.requests and time.monotonic() < deadline:  # the model is asked now
        time.sleep(0.02)
    child.send("3")  # typed ahead: the prompt is not on screen yet
    child.expect("Permission · notes wants to run mcp__notes__write_note")
    child.expect("4 deny")
    time.sleep(0.5)  # had the 3 been read, "always" would be granted by now
    child.send("4")
    child.expect("Not saved.")
    child.expect(pexpect.EOF)
    child.close()
    assert "allowed always" not in child.before
    assert "write_note" not in _granted()
    assert server.requests[1].body["messages"][-1]["role"] == "tool"
    assert "denied" in server.requests[1].body["messages"][-1]["content"]


def test_always_takes_a_second_key_and_then_is_remembered(tmp_path, server):
    server.enqueue(Reply.tool_calls([("mcp__notes__write_note", {"text": "buy milk"})]))
    server.enqueue(Reply.text("Saved."))
    child = _run(tmp_path, server)
    child.expect("4 deny")
    child.send("3")
    child.expect("y to save")  # asks before it saves anything
    assert "write_note" not in _granted()
    child.send("y")
    child.expect("Saved.")
    child.expect(pexpect.EOF)
    child.close()
    assert "mcp__notes__write_note" in _granted()
