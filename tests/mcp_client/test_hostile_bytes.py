"""What a stdio server writes cannot hurt a real ``dsh run`` (``spec/mcp.md`` section 4):
a message over ``max_mcp_message`` is refused unread, a line that is not UTF-8 fails the
calls at once, stray text leaves one sanitised line per kind, and a stderr flood leaves
``mcp.log`` capped with one rotation. The servers are ``hostile_bytes_server.py`` and, for the
HTTP transport's bodies and events, ``hostile_http_server.py`` (neither uses the SDK)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness.dsh_under_test import REAL_DSH
from mcp_client import hostile_http_server
from mcp_client.hostile_bytes_server import entry

CEILING = 60  # a guard on the whole run; the calls' own timeout is far longer
LONG_TIMEOUT = 600
MIB = 1024 * 1024


@dataclass
class Run:
    code: int
    events: list[dict]
    stderr: str
    seconds: float
    peak_rss: int  # bytes, of dsh (its server stays small)

    def results(self) -> list[dict]:
        return [event for event in self.events if event["type"] == "tool/result"]

    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("dsh:")]


def run(tmp_path: Path, *hows: str, at: dict[str, object] | None = None,
        **server: object) -> Run:
    """``dsh run --jsonl`` calling ``mcp__h__call`` once per ``how``, then ending; the
    server is the stdio one unless ``at`` is another's entry."""
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"h": {
        **(at or entry()), "tool_timeout": LONG_TIMEOUT, **server}}}))
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        *({"tool_calls": [{"name": "mcp__h__call", "arguments": {"how": how}}]}
          for how in hows), {"content": "done"}]}))
    out, err = tmp_path / "out.jsonl", tmp_path / "err.txt"
    started = time.monotonic()
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen([REAL_DSH, "run", "--jsonl", "--model", f"script:{script}",
                                    "--mcp-config", str(config), "--allow", "mcp__h", "go"],
                                   stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        guard = threading.Timer(CEILING, process.kill)
        guard.start()
        try:  # wait4, not wait: the rusage of this one run, for its peak memory
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            guard.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    assert process.returncode != -9, f"the run did not end within {CEILING} s"
    return Run(process.returncode, [json.loads(line) for line in out.read_text().splitlines()],
               err.read_text(), seconds, usage.ru_maxrss * 1024)


def test_a_message_over_max_mcp_message_is_refused_before_it_is_built(tmp_path):
    idle = run(tmp_path, "plain")
    assert idle.code == 0, idle.stderr
    attack = run(tmp_path, "huge:64", "plain")
    assert attack.code == 0, attack.stderr
    assert attack.lines() == ["dsh: MCP_UNAVAILABLE: MCP server h sent a message over 16 MiB "
                              "(max_mcp_message); its connection is closed"]
    first, second = attack.results()
    assert first["error"]["code"] == second["error"]["code"] == "MCP_UNAVAILABLE"
    assert "a message over 16 MiB" in first["error"]["message"]
    assert attack.events[-1]["type"] == "turn/completed"
    # at most the limit is ever held; the 64 MiB line is never built
    assert attack.peak_rss - idle.peak_rss < 16 * MIB + 32 * MIB, (attack.peak_rss, idle.peak_rss)


def test_max_mcp_message_is_set_per_server(tmp_path):
    fits = run(tmp_path, "huge:2", max_mcp_message=3 * MIB)
    [result] = fits.results()
    assert result["error"] is None, result
    refused = run(tmp_path, "huge:2", max_mcp_message=MIB)
    [result] = refused.results()
    assert result["error"]["code"] == "MCP_UNAVAILABLE"
    assert "a message over 1 MiB" in result["error"]["message"]


def test_a_line_that_is_not_utf8_fails_this_call_and_the_next_at_once(tmp_path):
    attack = run(tmp_path, "not-utf8", "plain")
    assert attack.code == 0, attack.stderr
    assert attack.lines() == ["dsh: MCP_UNAVAILABLE: MCP server h wrote a line that is not "
                              "UTF-8; its connection is closed"]
    first, second = attack.results()
    assert first["error"]["code"] == "MCP_UNAVAILABLE", first
    assert second["error"] == {"name": "ToolError", "code": "MCP_UNAVAILABLE",
                               "message": "MCP server h wrote a line that is not UTF-8"}
    assert attack.seconds < CEILING / 2  # neither call waited out its 600 s timeout


def test_stray_text_on_stdout_leaves_one_sanitised_line_per_kind(tmp_path):
    noisy = run(tmp_path, "noise", "noise", "plain")
    assert noisy.code == 0, noisy.stderr
    assert [result["content"] for result in noisy.results()] == ["ok", "ok", "ok"]
    assert noisy.lines() == [
        "dsh: MCP server h wrote a line that is not JSON on stdout (left out, as are any "
        "more like it): 'Server starting RED on port 8080'",
        "dsh: MCP server h wrote a line that is not JSON-RPC on stdout (left out, as are "
        "any more like it): '{\"hello\": \"world\"}'"]
    assert noisy.stderr == "".join(line + "\n" for line in noisy.lines())  # nothing else


def test_a_stderr_flood_leaves_mcp_log_capped_with_one_rotation(tmp_path):
    flood = run(tmp_path, "flood:25")
    assert flood.code == 0, flood.stderr
    [result] = flood.results()
    assert result["content"] == "ok"
    home = Path(os.environ["DSH_HOME"])
    log, rotated = home / "mcp.log", home / "mcp.log.1"
    assert sorted(path.name for path in home.glob("mcp.log*")) == ["mcp.log", "mcp.log.1"]
    assert log.stat().st_size <= 10 * MIB
    assert 9 * MIB < rotated.stat().st_size <= 10 * MIB
    assert log.read_bytes().endswith(b"E" * 1023 + b"\n")  # the newest is kept


@pytest.fixture
def http_server():
    """The raw HTTP server's ``mcpServers`` entry, the server running on 127.0.0.1."""
    server = subprocess.Popen([sys.executable, hostile_http_server.__file__],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield hostile_http_server.entry(int(server.stdout.readline()))
    finally:
        server.kill()
        server.wait()


def test_an_http_body_or_event_over_max_mcp_message_is_refused_and_the_run_goes_on(
        tmp_path, http_server):
    idle = run(tmp_path, "plain", at=http_server)
    assert idle.code == 0, idle.stderr
    attack = run(tmp_path, "json:64", "sse:17", "gzip", "sse:2", "plain", at=http_server)
    assert attack.code == 0, attack.stderr
    json_body, event, compressed, fits, plain = attack.results()
    assert json_body["error"]["code"] == "MCP_TOOL_ERROR"
    assert "a message over 16 MiB (max_mcp_message)" in json_body["error"]["message"]
    assert event["error"]["code"] == "MCP_UNAVAILABLE"  # the SDK ends that one stream
    assert "SSE stream failed" in event["error"]["message"]
    assert "a compressed body, though dsh asks for identity" in compressed["error"]["message"]
    # 2 MiB in one event is under the limit (the SDK's own default stops at 1 MiB)
    assert fits["error"] is None, fits
    assert plain["content"] == "ok"
    assert "Traceback" not in attack.stderr
    assert attack.peak_rss - idle.peak_rss < 16 * MIB + 48 * MIB, (attack.peak_rss, idle.peak_rss)
