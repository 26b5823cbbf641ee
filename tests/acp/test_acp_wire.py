"""Bad input to ``dsh acp`` as raw JSON-RPC lines: each an error, the agent alive."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path

import pytest
from harness.acp_client import DB, WAIT, ask, script
from harness.acp_shared import rescript
from harness.dsh_under_test import DSH, REAL_DSH, own_home_env

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"elicitation": {"form": {}}},
                   "clientInfo": {"name": "raw", "version": "1"}}}


class Raw:
    """``dsh acp`` on pipes: lines in, one JSON object per stdout line out."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen([REAL_DSH, "acp", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=dict(os.environ) if env is None else env)
        self.lines: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.seen: list[dict] = []

    def _pump(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)  # every stdout line is one JSON-RPC message
            assert isinstance(message, dict) and message["jsonrpc"] == "2.0"
            self.lines.put(message)
        self.lines.put(None)

    def send(self, message: dict | bytes) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def reply(self, request_id) -> dict:
        """The response to ``request_id`` (messages before it are kept in ``seen``)."""
        while True:
            message = self.lines.get(timeout=WAIT)
            assert message is not None, self.process.stderr.read().decode()
            self.seen.append(message)
            if message.get("id") == request_id and "method" not in message:
                return message

    def request(self, method: str) -> dict:
        """The next request the agent sends with ``method`` (an elicitation, a permission)."""
        while True:
            message = self.lines.get(timeout=WAIT)
            assert message is not None, self.process.stderr.read().decode()
            self.seen.append(message)
            if message.get("method") == method:
                return message

    def call(self, request_id, method: str, params: dict) -> dict:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return self.reply(request_id)

    def new_session(self, cwd: Path) -> str:
        return self.call("new", "session/new", {"cwd": str(cwd), "mcpServers": []})[
            "result"]["sessionId"]

    def end(self) -> int:
        self.process.stdin.close()
        while self.lines.get(timeout=WAIT) is not None:
            pass
        return self.process.wait(timeout=WAIT)

    def peak_rss_kb(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines()
                        if line.startswith("VmHWM")))


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """One ``dsh acp``, initialized, for the tests whose bad input comes after a good start
    and leaves the agent as it was: each opens its own session, its script written first
    (``rescript``); the agent's clean exit is checked once, after the module's last test."""
    folder = tmp_path_factory.mktemp("acp-wire")
    model = script(folder, {"content": "hi"})
    dsh = Raw("-m", model, env=own_home_env(folder / "home"))
    dsh.model = model
    assert "result" in dsh.call(0, "initialize", INIT["params"])
    yield dsh
    assert dsh.end() == 0


def test_malformed_lines_and_unknown_methods_are_errors_and_the_agent_goes_on(tmp_path):
    dsh = Raw("-m", script(tmp_path, {"content": "hi"}))
    dsh.send(b"{not json")
    assert dsh.reply(None)["error"]["code"] == -32700
    dsh.send(b"[1, 2]")
    assert dsh.reply(None)["error"]["code"] == -32600
    assert dsh.call(7, "no/such_method", {})["error"]["code"] == -32601
    assert dsh.call(8, "session/prompt", {"bogus": 1})["error"]["code"] == -32602
    assert dsh.call(0, "initialize", INIT["params"])["result"]["protocolVersion"] == 1
    dsh.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}})
    session = dsh.new_session(tmp_path)
    dsh.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
    reply = dsh.call(9, "session/prompt", {"sessionId": session,
                                           "prompt": [{"type": "text", "text": "hi"}]})
    assert reply["result"] == {"stopReason": "end_turn"}
    assert dsh.end() == 0


def test_a_line_over_the_limit_is_skipped_unheld_and_answered_under_its_id(tmp_path):
    dsh = Raw("-m", script(tmp_path, {"content": "hi"}))
    assert "result" in dsh.call(0, "initialize", INIT["params"])
    before = dsh.peak_rss_kb()
    huge = b'{"jsonrpc":"2.0","id":41,"method":"session/prompt","params":{"x":"' + (
        b"a" * (110 * 1024 * 1024)) + b'"}}'
    dsh.send(huge)
    error = dsh.reply(41)["error"]
    assert error["code"] == -32600 and "over 52,428,800 bytes" in error["data"]["details"]
    # held up to the limit while it might be a valid line, never past it (110 MB sent)
    assert dsh.peak_rss_kb() - before < 70 * 1024
    assert "result" in dsh.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    assert dsh.end() == 0


def test_a_10_mb_prompt_is_a_turn(tmp_path, agent):
    dsh = agent
    rescript(dsh.model, {"content": "read it"})
    session = dsh.new_session(tmp_path)
    text = "x" * (10 * 1024 * 1024)
    reply = dsh.call(2, "session/prompt", {"sessionId": session,
                                           "prompt": [{"type": "text", "text": text}]})
    assert reply["result"] == {"stopReason": "end_turn"}


def test_a_second_prompt_while_one_runs_is_refused_and_the_first_goes_on(tmp_path, agent):
    dsh = agent
    rescript(dsh.model, ask(DB), {"content": "done"})
    session = dsh.new_session(tmp_path)
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
    dsh.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": prompt})
    form = dsh.request("elicitation/create")
    second = dsh.call(2, "session/prompt", prompt)
    assert second["error"]["code"] == -32600
    assert second["error"]["data"]["code"] == "SESSION_BUSY"
    dsh.send({"jsonrpc": "2.0", "id": form["id"],
              "result": {"action": "accept", "content": {"db": "SQLite"}}})
    assert dsh.reply(1)["result"] == {"stopReason": "end_turn"}


def test_loading_an_unknown_session_is_an_error(tmp_path, agent):
    dsh = agent
    error = dsh.call(1, "session/load", {"sessionId": "s_nope", "cwd": str(tmp_path),
                                         "mcpServers": []})["error"]
    assert error["code"] == -32602 and error["data"]["code"] == "SESSION_NOT_FOUND"
    assert "result" in dsh.call(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})


def test_the_client_dying_mid_question_aborts_it_stores_the_session_and_exits_0(tmp_path):
    dsh = Raw("-m", script(tmp_path, ask(DB), {"content": "never"}))
    dsh.call(0, "initialize", INIT["params"])
    session = dsh.new_session(tmp_path)
    dsh.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
              "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}})
    dsh.request("elicitation/create")
    assert dsh.end() == 0
    shown = subprocess.run([DSH, "sessions", "show", "--json", session], capture_output=True,
                           text=True, timeout=WAIT, check=True)
    stored = json.loads(shown.stdout)
    assert [m["content"] for m in stored["messages"] if m["role"] == "user"] == ["go"]
    tool = next(m for m in stored["messages"] if m["role"] == "tool")
    assert "ASK_ABORTED" in tool["content"]


def test_sigterm_mid_question_leaves_it_resumable_and_a_load_asks_it_again(tmp_path):
    import signal

    # the resumed batch's call ends its turn ("SQLite it is"), then the new prompt's turn
    model = script(tmp_path, ask(DB), {"content": "SQLite it is"}, {"content": "noted"})
    dsh = Raw("-m", model)
    dsh.call(0, "initialize", INIT["params"])
    session = dsh.new_session(tmp_path)
    dsh.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
              "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}})
    first = dsh.request("elicitation/create")
    dsh.process.send_signal(signal.SIGTERM)
    assert dsh.process.wait(timeout=WAIT) == 143
    again = Raw("-m", model)
    again.call(0, "initialize", INIT["params"])
    assert "result" in again.call(1, "session/load", {"sessionId": session, "cwd": str(tmp_path),
                                                      "mcpServers": []})
    again.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "and?"}]}})
    form = again.request("elicitation/create")
    assert form["params"]["toolCallId"] == first["params"]["toolCallId"] == "ask"
    again.send({"jsonrpc": "2.0", "id": form["id"],
                "result": {"action": "accept", "content": {"db": "SQLite"}}})
    assert again.reply(2)["result"] == {"stopReason": "end_turn"}
    chunks = [m["params"]["update"]["content"]["text"] for m in again.seen
              if m.get("method") == "session/update"
              and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunks).endswith("SQLite it isnoted")
    assert again.end() == 0


def test_a_bad_mcp_server_entry_in_session_new_is_invalid_params(tmp_path, agent):
    dsh = agent
    error = dsh.call(1, "session/new", {"cwd": str(tmp_path), "mcpServers": [
        {"name": "two words", "command": "true", "args": [], "env": []}]})["error"]
    assert error["code"] == -32602 and error["data"]["code"] == "CONFIG_ERROR"
    assert "two words" in error["data"]["details"]
    assert "result" in dsh.call(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
