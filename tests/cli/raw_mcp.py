"""``dsh mcp`` driven in raw JSON-RPC over stdio: an agent's session for the CLI tests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from harness.dsh_under_test import DSH

WAIT = 30
AGENT_BATCH = {"questions": [{"id": "db", "question": "Which database for the agent?",
                              "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}


def agent_session(tmp_path: Path, client: str = "clientWeb",
                  answers: dict | None = None) -> Path:
    """One batch asked by an MCP client through ``dsh mcp --answers``, in raw JSON-RPC over
    stdio; the folder the server ran in."""
    where = tmp_path / "agent-project"
    where.mkdir()
    path = tmp_path / "agent-answers.json"
    path.write_text(json.dumps({"db": ["SQLite"]} if answers is None else answers))
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": client, "version": "1.0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ask_user_question", "arguments": AGENT_BATCH}},
    ]
    process = subprocess.Popen(
        [DSH, "mcp", "--answers", str(path)], cwd=where,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ))
    try:
        assert process.stdin is not None and process.stdout is not None
        for frame in frames:
            process.stdin.write(json.dumps(frame) + "\n")
        process.stdin.flush()
        replies = {}
        while 2 not in replies:
            line = process.stdout.readline()
            assert line, process.stderr.read() if process.stderr else ""
            reply = json.loads(line)
            replies[reply.get("id")] = reply
        assert "result" in replies[2], replies[2]
        process.stdin.close()
        assert process.wait(timeout=WAIT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return where
