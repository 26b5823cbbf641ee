"""``dsh acp`` driven by acpx 0.19.1 (``tests/npm-acp``), an ACP client nobody here wrote.

Its CLI for text turns, permissions (``--approve-all``, ``--deny-all``), cancel and a
session it loads; its runtime API (``tests/npm-acp/acpx_turn.mjs``) with
``elicitationModes: ["form"]`` for questions. acpx needs Node 22: the Node of tests/npm22.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from harness.acp_client import DB, ask, script
from harness.dsh_under_test import DSH

WAIT = 60
ROOT = Path(__file__).parents[1]
NODE = ROOT / "npm22" / "node_modules" / "node" / "bin" / "node"
ACPX = ROOT / "npm-acp" / "node_modules" / "acpx" / "dist" / "cli.js"
TURN = ROOT / "npm-acp" / "acpx_turn.mjs"
NOTES = str(ROOT / "fakes" / "mcp_notes_server.py")


@pytest.fixture
def acpx(tmp_path):
    """``acpx(*args, model=..., dsh_args=())``: acpx on ``dsh acp``, its HOME in tmp_path."""
    if not (NODE.exists() and ACPX.exists()):
        pytest.skip("acpx is not installed: run `npm ci --prefix tests/npm-acp` and "
                    "`npm ci --prefix tests/npm22` (bash .ci/run does)")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}

    def command(*args: str, model: str, dsh_args: tuple[str, ...] = ()) -> list[str]:
        agent = shlex.join([DSH, "acp", "-m", model, *dsh_args])
        return [str(NODE), str(ACPX), "--agent", agent, *args]

    def run(*args: str, model: str, dsh_args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
        return subprocess.run(command(*args, model=model, dsh_args=dsh_args), env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)

    run.command = command  # type: ignore[attr-defined]
    run.env = env  # type: ignore[attr-defined]
    return run


def _messages(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _updates(out: str, kind: str) -> list[dict]:
    return [m["params"]["update"] for m in _messages(out)
            if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == kind]


def test_a_text_turn(acpx, tmp_path):
    done = acpx("exec", "hi", model=script(tmp_path, {"content": "hello from dsh"}))
    assert done.returncode == 0, done.stderr
    assert "hello from dsh" in done.stdout


def _notes(tmp_path: Path) -> tuple[str, ...]:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [NOTES]}}}))
    return ("--mcp-config", str(config))


# acpx exits 5 (its PERMISSION_DENIED) after a turn in which it denied a request
@pytest.mark.parametrize(("flag", "status", "code", "exit"), [
    ("--approve-all", "completed", None, 0), ("--deny-all", "failed", "PERMISSION_DENIED", 5)])
def test_permissions_approve_all_and_deny_all(acpx, tmp_path, flag, status, code, exit):
    model = script(tmp_path, {"tool_calls": [{"id": "w", "name": "mcp__notes__write_note",
                                              "arguments": {"text": "a"}}]},
                   {"content": "done"})
    done = acpx(flag, "--format", "json", "exec", "go", model=model, dsh_args=_notes(tmp_path))
    assert done.returncode == exit, done.stderr
    asked = [m for m in _messages(done.stdout) if m.get("method") == "session/request_permission"]
    assert len(asked) == 1
    [result] = [u for u in _updates(done.stdout, "tool_call_update") if "status" in u]
    assert result["status"] == status
    assert (result.get("rawOutput") or {}).get("code") == code


def test_cancel_ends_the_turn_cancelled(acpx, tmp_path):
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps({"delay": 0.2, "turns": [{"content": " ".join(["w"] * 300)}]}))
    model = f"script:{slow}"
    assert acpx("sessions", "new", model=model).returncode == 0
    prompt = subprocess.Popen(acpx.command("--format", "json", "prompt", "go", model=model),
                              env=acpx.env, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        for line in prompt.stdout:  # the turn is streaming: now cancel it
            if "agent_message_chunk" in line:
                break
        cancelled = acpx("cancel", model=model)
        assert cancelled.returncode == 0, cancelled.stderr
        rest = prompt.stdout.read()
        assert prompt.wait(timeout=WAIT) == 0
    finally:
        prompt.kill()
    replies = [m for m in _messages(rest) if "result" in m and "stopReason" in (m["result"] or {})]
    assert replies[-1]["result"]["stopReason"] == "cancelled"


def test_a_later_prompt_loads_the_session_acpx_created(acpx, tmp_path):
    model = script(tmp_path, {"content": "first"})
    created = acpx("sessions", "new", model=model)
    assert created.returncode == 0, created.stderr
    done = acpx("--format", "json", "prompt", "hi", model=model)
    assert done.returncode == 0, done.stderr
    methods = [m.get("method") for m in _messages(done.stdout)]
    assert "session/load" in methods and "session/new" not in methods
    assert "first" in done.stdout


@pytest.mark.parametrize(("reply", "expected"), [
    ({"action": "accept", "content": {"db": "SQLite"}}, '"selected":["SQLite"]'),
    ({"action": "decline"}, "ASK_DECLINED"),
])
def test_the_runtime_api_answers_a_question_as_a_form(acpx, tmp_path, reply, expected):
    model = script(tmp_path, ask(DB), {"content": "thanks"})
    done = subprocess.run(
        [str(NODE), str(TURN), str(tmp_path / "state"), str(tmp_path), "go", json.dumps(reply),
         DSH, "acp", "-m", model],
        env=acpx.env, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    form = lines[0]["elicitation"]
    assert form["mode"] == "form" and form["toolCallId"] == "ask"
    assert [c["const"] for c in form["requestedSchema"]["properties"]["db"]["oneOf"]] == [
        "PostgreSQL", "SQLite"]
    assert lines[-1] == {"text": "thanks", "result": {"status": "completed",
                                                      "stopReason": "end_turn"}}
    shown = subprocess.run([DSH, "sessions", "show", "--json", form["sessionId"]],
                           capture_output=True, text=True, timeout=WAIT, check=True)
    tool = next(m for m in json.loads(shown.stdout)["messages"] if m["role"] == "tool")
    assert expected in tool["content"]
