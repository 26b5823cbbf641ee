"""``dsh mcp --http``: Streamable HTTP on 127.0.0.1, a token required, Host checked."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request

import pytest
from dsh_under_test import DSH
from mcp_util import BATCH, bounded


@pytest.fixture
def http_server(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    process = subprocess.Popen([DSH, "mcp", "--http", "--answers", str(answers)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=30)


def _status(url: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=b"{}", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        **headers})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_token_url_serves_the_tool(http_server, mode):
    from mcp import Client

    async def main():
        async with Client(http_server, mode=mode) as mcp:
            expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
            assert mcp.protocol_version == expected
            return await mcp.call_tool("ask_user_question", BATCH)

    result = bounded(main())
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_without_the_token_or_with_another_host_it_is_refused(http_server):
    base, token = http_server.rsplit("/", 2)[0], http_server.rsplit("/", 2)[1]
    assert _status(f"{base}/mcp", {}) == 403
    assert _status(f"{base}/wrong/mcp", {}) == 403
    assert _status(f"{base}/mcp", {"Authorization": "Bearer nope"}) == 403
    assert _status(http_server, {"Host": "evil.example:80"}) in (403, 421)
    # the Bearer header is as good as the token in the path
    assert _status(f"{base}/mcp", {"Authorization": f"Bearer {token}"}) not in (403, 404)




def test_dsh_run_uses_a_streamable_http_server_with_its_headers(http_server, tmp_path):
    """The MCP client side over Streamable HTTP: dsh run's agent calls dsh mcp --http's
    tool, the token sent as a configured Authorization header instead of in the path."""
    base, token = http_server.rsplit("/", 2)[0], http_server.rsplit("/", 2)[1]
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"desk": {
        "type": "http", "url": f"{base}/mcp", "headers": {"Authorization": "Bearer ${DESK}"}}}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "mcp__desk__ask_user_question", "arguments": BATCH}]},
        {"content": "done"}]}))
    result = subprocess.run(
        [DSH, "run", "--model", f"script:{script}", "--mcp-config", str(servers),
         "--allow", "mcp__desk", "--jsonl", "go"], capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL, env={**os.environ, "DESK": token})
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    results = [event for event in events if event["type"] == "tool/result"]
    assert results and results[0]["error"] is None, results
    assert json.loads(results[0]["content"]) == {"answers": [{"id": "db",
                                                              "selected": ["SQLite"]}]}
@pytest.mark.parametrize("flag", ["--port", "--http-port"])  # --http-port: the old spelling
def test_port_is_the_http_endpoints_port(tmp_path, flag):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([DSH, "mcp", "--http", flag, str(port)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        assert line.startswith(f"dsh: mcp http://127.0.0.1:{port}/"), line
    finally:
        process.terminate()
        process.wait(timeout=30)
