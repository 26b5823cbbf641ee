"""``approve_tool_use`` with an approvals file dsh cannot read: one line, and the human asked.

Raw JSON-RPC to a real ``dsh mcp`` over stdio; nobody at the desk, so a call that is asked
comes back denied with "no one is at the dsh desk".
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from harness.tasks_wire import StdioDsh


@pytest.mark.parametrize("kind", ["directory", "fifo", "torn"])
def test_a_hostile_approvals_file_is_one_line_and_the_call_still_asked(kind, dsh_home):
    path = dsh_home / "permissions.json"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    else:
        path.write_text('{"always": {"Bash": ')
        path.chmod(0o600)
    dsh = StdioDsh("--wait", "3", stderr=subprocess.PIPE)
    try:
        dsh.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "claude-code", "version": "1.0"}})
        dsh.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = dsh.request("tools/call", {"name": "approve_tool_use", "arguments": {
            "tool_name": "Bash", "input": {"command": "make"}}})
    finally:
        dsh.close()
    assert "error" not in reply, reply  # before, for a directory: -32603 quoting [Errno 21]
    outcome = json.loads(reply["result"]["content"][0]["text"])
    assert outcome["behavior"] == "deny"
    assert outcome["message"].startswith("denied: no one is at the dsh desk")  # it was asked
    assert dsh.process.stderr is not None
    said = dsh.process.stderr.read().splitlines()
    assert [line for line in said if "Traceback" in line or line.startswith("  File ")] == []
    [line] = [line for line in said if "PRIVATE_FILE_ERROR" in line]
    assert line.startswith(f"dsh: PRIVATE_FILE_ERROR: {path} ")
    assert line.endswith("saved approvals are not applied"), line
