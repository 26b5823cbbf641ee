"""``dsh mcp --http``: Streamable HTTP on 127.0.0.1, a token required, Host checked."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest
from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, bounded


def _serving(home):
    """``dsh mcp --http --answers`` with ``home`` as its DSH_HOME; yields its URL."""
    answers = home / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    process = subprocess.Popen([DSH, "mcp", "--http", "--answers", str(answers)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "DSH_HOME": str(home)})
    try:
        line = process.stderr.readline()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """One server for the tests that leave at most a few sessions open (each start is about
    a second of CPU); the session cap's test has one of its own."""
    yield from _serving(tmp_path_factory.mktemp("http-home"))


@pytest.fixture
def own_http_server(dsh_home):
    yield from _serving(dsh_home)


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


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def _raw(url: str, message: dict | None, headers: dict[str, str] | None = None,
         method: str = "POST") -> http.client.HTTPResponse:
    """One request on a connection of its own, its response read whole (it is returned)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    body = json.dumps(message).encode() if message is not None else None
    connection.request(method, parts.path, body=body, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25", **(headers or {})})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def _opened(url: str, headers: dict[str, str] | None = None) -> str:
    """The id of a new session that ``url`` opened with ``initialize`` and left open."""
    response = _raw(url, INITIALIZE, headers)
    assert response.status == 200, (response.status, response.getheader("location"))
    session = response.getheader("mcp-session-id")
    assert session
    return session


def test_a_trailing_slash_keeps_the_token_and_bearer_is_any_case(http_server):
    """``/TOKEN/mcp/`` was a 307 to ``/mcp`` (the token dropped); ``bearer`` was a 403."""
    base, token = http_server.rsplit("/", 2)[0], http_server.rsplit("/", 2)[1]
    slashed = _raw(http_server + "/", INITIALIZE)
    assert (slashed.status, slashed.getheader("location")) == (200, None)
    for scheme in ("bearer", "BEARER", "Bearer"):
        for path in ("/mcp", "/mcp/"):
            response = _raw(base + path, INITIALIZE, {"Authorization": f"{scheme} {token}"})
            assert (response.status, response.getheader("location")) == (200, None), path
    for wrong in (f"Basic {token}", f"bearer {token[:-1]}", token, f"bearer{token}"):
        assert _raw(f"{base}/mcp", INITIALIZE, {"Authorization": wrong}).status == 403
    assert _raw(f"{base}/{token[:-1]}/mcp", INITIALIZE).status == 403
    assert _raw(f"{base}/{token}/other", INITIALIZE).status == 403


def test_sessions_never_closed_are_capped_at_100_the_idlest_closed_first(own_http_server):
    """3,000 sessions opened and never closed were all kept; now at most 100 live, and the
    one idle the longest goes first: a session just used, or one with a request still in
    flight (an open GET stream), stays."""
    http_server = own_http_server
    sessions = [_opened(http_server) for _ in range(100)]

    def alive(session: str) -> bool:
        status = _raw(http_server, PING, {"Mcp-Session-Id": session}).status
        assert status in (200, 404), status
        return status == 200

    assert alive(sessions[0])  # now the most recently used
    parts = urlsplit(http_server)
    stream = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    stream.request("GET", parts.path, headers={"Accept": "text/event-stream",
                                               "Mcp-Session-Id": sessions[1],
                                               "MCP-Protocol-Version": "2025-11-25"})
    assert stream.getresponse().status == 200  # held open: a request in flight
    try:
        later = [_opened(http_server) for _ in range(30)]
        assert alive(sessions[0]) and alive(sessions[1])
        assert not any(alive(session) for session in sessions[2:32])
        assert all(alive(session) for session in sessions[32:] + later)
    finally:
        stream.close()


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


@pytest.mark.parametrize(("signum", "status"), [(15, 143), (2, 130)])
def test_a_signal_ends_dsh_mcp_http_quietly(signum, status):
    """ctrl-c or SIGTERM: the exit status of the signal and no traceback on stderr."""
    process = subprocess.Popen([DSH, "mcp", "--http"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert process.returncode == status
    assert err == "", err
