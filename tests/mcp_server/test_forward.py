"""``dsh mcp --hub URL``: a real forwarder on stdio, driven with raw JSON-RPC, in front of a
real ``dsh mcp --http`` (the hub's ``/mcp`` is that same server behind an agent token)."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH

CEILING = 30.0  # a broken forwarder fails the test instead of hanging it

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw-agent é", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(rpc_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call",
            "params": {"name": "ask_user_question", "arguments": BATCH}}


class Lines:
    """A child's stream read by a thread: each line, waited for with a ceiling."""

    def __init__(self, stream: Any) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.queue.put(line.rstrip("\n"))
        self.queue.put(None)

    def next(self, ceiling: float = CEILING) -> str | None:
        line = self.queue.get(timeout=ceiling)
        if line is not None:
            self.seen.append(line)
        return line

    def until(self, predicate: Any, ceiling: float = CEILING) -> str:
        deadline = time.monotonic() + ceiling
        while True:
            line = self.next(max(0.01, deadline - time.monotonic()))
            assert line is not None, f"ended before the line; saw {self.seen}"
            if predicate(line):
                return line


class Forwarder:
    """``dsh mcp --hub URL`` as a child: raw JSON-RPC lines in, lines out."""

    def __init__(self, url: str, token: str | None, *args: str, cwd: Path | None = None,
                 env: dict[str, str] | None = None):
        env = {**{key: value for key, value in os.environ.items() if key != "DSH_HUB_TOKEN"},
               **(env or {})}
        if token is not None:
            env["DSH_HUB_TOKEN"] = token
        self.process = subprocess.Popen([DSH, "mcp", "--hub", url, *args],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
        self.out = Lines(self.process.stdout)
        self.err = Lines(self.process.stderr)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def reply(self, rpc_id: Any) -> dict[str, Any]:
        """The response to ``rpc_id`` (other messages from the hub are skipped)."""
        line = self.out.until(lambda text: json.loads(text).get("id") == rpc_id
                              and "method" not in json.loads(text))
        return json.loads(line)

    def initialize(self) -> dict[str, Any]:
        self.send(INITIALIZE)
        reply = self.reply(1)
        self.send(INITIALIZED)
        return reply

    def close(self) -> int:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
        return self.process.wait(timeout=CEILING)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class HttpServer:
    """A real ``dsh mcp --http`` child; ``token`` fixes its (otherwise random) token, so a
    restarted one on the same port takes the same agent token, as a hub would."""

    def __init__(self, *args: str, port: int = 0, token: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        argv = ["mcp", "--http", "--port", str(port), *args]
        if token is None:
            command = [DSH, *argv]
        else:  # the real dsh, only its one random token fixed
            command = [sys.executable, "-c",
                       "import runpy, secrets, sys; "
                       f"secrets.token_urlsafe = lambda n=None: {token!r}; "
                       f"sys.argv = ['dsh', *{argv!r}]; "
                       "runpy.run_module('dsh_cli', run_name='__main__', alter_sys=True)"]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, env=env)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        self.url = line.split()[-1]  # http://127.0.0.1:PORT/TOKEN/mcp
        base, self.token, _ = self.url.rsplit("/", 2)
        self.base = base
        self.port = int(base.rsplit(":", 1)[1])

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=CEILING)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=CEILING)


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"db": ["SQLite"]}))
    return str(path)


@pytest.fixture(scope="module")
def answering(tmp_path_factory):
    """One ``dsh mcp --http --answers`` (its own DSH_HOME) for the tests whose forwarder only
    needs a server that answers: each forwarder has its own MCP session there (and a 2026
    task is reached by its id), so nothing one test does is seen by the next. One process,
    not one per test (each start is about a second of CPU)."""
    home = tmp_path_factory.mktemp("answering-home")
    answers = home / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    server = HttpServer("--answers", str(answers), env={**os.environ, "DSH_HOME": str(home)})
    try:
        yield server
    finally:
        server.stop()


def _answered(reply: dict[str, Any]) -> bool:
    return reply.get("result", {}).get("structuredContent") == {
        "answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_every_message_goes_through_to_the_server_and_back(answering):
    server = answering
    forwarder = Forwarder(f"{server.base}/mcp", server.token)
    try:
        init = forwarder.initialize()
        assert init["result"]["serverInfo"]["name"] == "dsh"
        forwarder.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        names = [tool["name"] for tool in forwarder.reply("list")["result"]["tools"]]
        assert "ask_user_question" in names
        forwarder.send(_call(2))
        assert _answered(forwarder.reply(2))
        forwarder.send({"jsonrpc": "2.0", "id": 3, "method": "no/such"})
        assert forwarder.reply(3)["error"]["code"] == -32601  # the server's own error
        assert forwarder.close() == 0
        assert forwarder.err.seen == [] or all("Traceback" not in line
                                               for line in forwarder.err.seen)
    finally:
        forwarder.close()


class _Recorder(BaseHTTPRequestHandler):
    """Records each POST's headers and answers ``initialize`` as a server would."""

    seen: queue.Queue[dict[str, str]] = queue.Queue()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.seen.put({key.lower(): value for key, value in self.headers.items()})
        if "id" not in body:
            self.send_response(202)
            self.end_headers()
            return
        reply = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "recorder", "version": "1"}}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("mcp-session-id", "s1")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def do_GET(self) -> None:
        self.send_response(405)
        self.end_headers()

    def do_DELETE(self) -> None:
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


def _recorder() -> ThreadingHTTPServer:
    """A ``_Recorder`` serving on 127.0.0.1, nothing seen yet."""
    while not _Recorder.seen.empty():
        _Recorder.seen.get()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_the_token_and_who_asks_travel_on_every_request(tmp_path):
    where = tmp_path / "répertoire de travail"
    where.mkdir()
    server = _recorder()
    forwarder = Forwarder(f"http://127.0.0.1:{server.server_port}", "dshhub_secret",
                          cwd=where)
    try:
        assert forwarder.initialize()["result"]["serverInfo"]["name"] == "recorder"
        forwarder.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        forwarder.reply(2)
        seen = [_Recorder.seen.get(timeout=CEILING) for _ in range(3)]
        for headers in seen:  # initialize, the initialized notification, tools/list
            assert headers["authorization"] == "Bearer dshhub_secret"
            assert headers["x-dsh-agent"] == quote("raw-agent é", safe="")
            assert headers["x-dsh-machine"] == quote(socket.gethostname(), safe="")
            assert headers["x-dsh-cwd"] == quote(str(where), safe="")
            assert not any(name.startswith("x-dsh-forward") for name in headers)
        assert seen[2]["mcp-session-id"] == "s1"
        assert seen[2]["mcp-protocol-version"] == "2025-11-25"
    finally:
        forwarder.close()
        server.shutdown()


def test_the_proxy_the_environment_names_is_taken():
    """HTTP_PROXY reaches the hub through the proxy (the recorder stands in for it)."""
    server = _recorder()
    proxy = f"http://127.0.0.1:{server.server_port}"
    forwarder = Forwarder("http://hub.invalid:8123", "dshhub_secret", "--insecure-http",
                          env={"HTTP_PROXY": proxy, "http_proxy": proxy, "NO_PROXY": "",
                               "no_proxy": ""})
    try:
        assert forwarder.initialize()["result"]["serverInfo"]["name"] == "recorder"
        assert _Recorder.seen.get(timeout=CEILING)["host"] == "hub.invalid:8123"
    finally:
        forwarder.close()
        server.shutdown()


def test_a_restarted_server_gets_a_new_session_in_flight_calls_an_error_the_next_goes_on(
        answers):
    token = "dshhub_" + "t" * 43
    port = _free_port()
    # no answers and no desk: a question waits (for a desk, up to --wait), so it is in flight
    server = HttpServer("--wait", "120", port=port, token=token)
    forwarder = Forwarder(f"http://127.0.0.1:{port}/mcp", token)
    try:
        forwarder.initialize()
        forwarder.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        forwarder.reply(2)
        call = _call(3)
        call["params"]["_meta"] = {"progressToken": "p3"}
        forwarder.send(call)
        # the question is held at the server: its progress comes at once
        forwarder.out.until(lambda line: json.loads(line).get("method") == "notifications/"
                            "progress")
        time_to_ask = time.monotonic()
        server.kill()
        dropped = forwarder.reply(3)
        assert "dropped while this request was in flight" in dropped["error"]["message"]
        forwarder.err.until(lambda line: "lost the hub" in line and "back-off" in line)
        # sent while nothing listens: kept, and sent again once a server is back
        forwarder.send(_call(4))
        server = HttpServer("--answers", answers, port=port, token=token)
        assert _answered(forwarder.reply(4))
        forwarder.err.until(lambda line: "is back: a new MCP session" in line)
        forwarder.send(_call(5))
        assert _answered(forwarder.reply(5))
        assert time.monotonic() - time_to_ask < CEILING
        assert forwarder.close() == 0
        assert not any("Traceback" in line for line in forwarder.err.seen)
    finally:
        forwarder.close()
        server.stop()


def test_a_hub_not_there_at_start_is_the_initialize_error_and_one_line():
    port = _free_port()  # nothing listens there
    forwarder = Forwarder(f"http://127.0.0.1:{port}", "dshhub_x")
    try:
        forwarder.send(INITIALIZE)
        reply = forwarder.reply(1)
        assert reply["error"]["code"] == -32000
        assert "cannot reach the hub" in reply["error"]["message"]
        line = forwarder.err.until(lambda text: "cannot reach the hub" in text)
        assert line.startswith("dsh: ") and f"127.0.0.1:{port}/mcp" in line
        assert forwarder.close() == 0
        assert len(forwarder.err.seen) == 1
    finally:
        forwarder.close()


def test_a_refused_token_is_said_once_and_is_the_initialize_error(answering):
    server = answering
    forwarder = Forwarder(f"{server.base}/mcp", "wrong")
    try:
        forwarder.send(INITIALIZE)
        assert "refused the agent token (HTTP 403)" in forwarder.reply(1)["error"]["message"]
        forwarder.err.until(lambda text: "refused the agent token" in text)
        assert forwarder.close() == 0
        assert len(forwarder.err.seen) == 1 and forwarder.err.next() is None
    finally:
        forwarder.close()


def _one_line_exit(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run([DSH, "mcp", *args], input="", capture_output=True, text=True,
                          timeout=CEILING, env={**os.environ, **env})
    return done.returncode, done.stderr


def test_no_token_is_one_line_and_status_2(monkeypatch):
    monkeypatch.delenv("DSH_HUB_TOKEN", raising=False)
    status, stderr = _one_line_exit(["--hub", "https://hub.example"], {})
    assert status == 2
    assert stderr.count("\n") == 1 and "DSH_HUB_TOKEN" in stderr, stderr


def test_a_token_file_is_read_and_a_bad_one_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("DSH_HUB_TOKEN", raising=False)
    empty = tmp_path / "empty"
    empty.write_text("\n")
    status, stderr = _one_line_exit(["--hub", "https://hub.example", "--hub-token-file",
                                     str(empty)], {})
    assert (status, stderr.count("\n")) == (2, 1) and "empty" in stderr
    port = _free_port()
    good = tmp_path / "token"
    good.write_text("dshhub_fromfile\n")
    forwarder = Forwarder(f"http://127.0.0.1:{port}", None, "--hub-token-file", str(good))
    try:  # it started: the token was taken (nothing listens, so initialize fails)
        forwarder.send(INITIALIZE)
        assert "cannot reach the hub" in forwarder.reply(1)["error"]["message"]
    finally:
        forwarder.close()


def test_plain_http_off_this_machine_needs_insecure_http():
    status, stderr = _one_line_exit(["--hub", "http://hub.example:8080"],
                                    {"DSH_HUB_TOKEN": "dshhub_x"})
    assert status == 2
    assert stderr.count("\n") == 1 and "--insecure-http" in stderr, stderr


def test_hub_with_another_answer_source_is_a_usage_error(answers):
    for extra in (["--answers", answers], ["--web"], ["--http"]):
        status, stderr = _one_line_exit(["--hub", "https://hub.example", *extra],
                                        {"DSH_HUB_TOKEN": "dshhub_x"})
        assert status == 2 and extra[0] in stderr and "cannot be combined" in stderr


def test_sigterm_ends_it_at_once_without_a_traceback(answering):
    server = answering
    forwarder = Forwarder(f"{server.base}/mcp", server.token)
    try:
        forwarder.initialize()  # stdin stays open
        forwarder.process.send_signal(signal.SIGTERM)
        assert forwarder.process.wait(timeout=CEILING) == 143
        assert forwarder.err.next() is None  # nothing on stderr
    finally:
        forwarder.close()


def test_bad_lines_get_json_rpc_errors_and_the_session_goes_on(answering):
    server = answering
    forwarder = Forwarder(f"{server.base}/mcp", server.token)
    try:
        forwarder.initialize()
        assert forwarder.process.stdin is not None
        forwarder.process.stdin.write("{not json\n")
        forwarder.process.stdin.write('{"jsonrpc": "2.0", "id": 9}\n')
        forwarder.process.stdin.write("[" * 100_000 + "\n")  # nested past any parser
        forwarder.process.stdin.flush()
        assert forwarder.reply(None)["error"]["code"] == -32700
        assert forwarder.reply(9)["error"]["code"] == -32600
        assert forwarder.reply(None)["error"]["code"] == -32700
        forwarder.send(_call(2))
        assert _answered(forwarder.reply(2))
    finally:
        forwarder.close()


def test_progress_and_a_cancel_pass_through_and_a_desk_answers():
    """The hub's progress reaches the agent; the agent's cancel reaches the hub, whose desk
    sees the question withdrawn; the next question is answered at the desk."""
    import asyncio

    from harness.mcp_util import jsonl_desk

    server = HttpServer("--wait", "60")
    forwarder = Forwarder(f"{server.base}/mcp", server.token)

    async def main() -> dict[str, Any]:
        async with jsonl_desk() as desk:
            await asyncio.to_thread(forwarder.initialize)
            call = _call(2)
            call["params"]["_meta"] = {"progressToken": "p2"}
            forwarder.send(call)
            requested = await desk.event("question/requested")
            assert requested["source"]["client"] == "raw-agent é"
            progress = await asyncio.to_thread(forwarder.out.until, lambda line: json.loads(
                line).get("method") == "notifications/progress")
            assert json.loads(progress)["params"]["progressToken"] == "p2"
            forwarder.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 2, "reason": "the agent moved on"}})
            resolved = await desk.event("question/resolved")
            assert resolved["rpc_id"] == requested["rpc_id"]
            forwarder.send(_call(3))
            again = await desk.event("question/requested")
            await desk.answer(again, [{"id": "db", "selected": ["SQLite"]}])
            return await asyncio.to_thread(forwarder.reply, 3)

    try:
        assert _answered(asyncio.run(asyncio.wait_for(main(), 60)))
    finally:
        forwarder.close()
        server.stop()


def test_tasks_of_both_eras_pass_through(answering):
    """A 2025-11-25 task (its status notification from the session's GET stream) and a
    2026-07-28 task (no initialize; each request's envelope and routing headers)."""
    server = answering
    session = Forwarder(f"{server.base}/mcp", server.token)
    sessionless = Forwarder(f"{server.base}/mcp", server.token)
    try:
        session.initialize()
        session.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ask_user_question", "arguments": {**BATCH, "delivery": "async"},
            "task": {"ttl": 60_000}}})
        task = session.reply(2)["result"]["task"]
        status = session.out.until(lambda line: json.loads(line).get(
            "method") == "notifications/tasks/status")
        assert json.loads(status)["params"]["taskId"] == task["taskId"]
        session.send({"jsonrpc": "2.0", "id": 3, "method": "tasks/result",
                      "params": {"taskId": task["taskId"]}})
        result = session.reply(3)["result"]["structuredContent"]
        assert result["answers"] == [{"id": "db", "selected": ["SQLite"]}]

        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "modern", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {
                    "extensions": {"io.modelcontextprotocol/tasks": {}}}}
        sessionless.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "ask_user_question", "arguments": {**BATCH, "delivery": "async"},
            "_meta": meta}})
        created = sessionless.reply(1)["result"]
        assert created["resultType"] == "task"
        for rpc_id in range(2, 200):
            sessionless.send({"jsonrpc": "2.0", "id": rpc_id, "method": "tasks/get",
                              "params": {"taskId": created["taskId"], "_meta": meta}})
            got = sessionless.reply(rpc_id)["result"]
            if got["status"] != "working":
                break
        assert got["status"] == "completed"
        assert got["result"]["structuredContent"]["answers"] == [
            {"id": "db", "selected": ["SQLite"]}]
    finally:
        session.close()
        sessionless.close()


def test_an_agent_that_closed_its_end_of_stdout_ends_it_quietly(answering):
    server = answering
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read what the forwarder writes
    process = subprocess.Popen([DSH, "mcp", "--hub", server.base],
                               stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "DSH_HUB_TOKEN": server.token})
    os.close(write_end)
    try:
        assert process.stdin is not None
        process.stdin.write(json.dumps(INITIALIZE) + "\n")
        process.stdin.flush()
        assert process.wait(timeout=CEILING) == 0
        assert process.stderr is not None
        assert "Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()


def test_a_line_over_the_cap_is_refused_unbuilt_and_the_session_goes_on(answering):
    from dsh_cli.core.limits import MCP_MESSAGE_BYTES

    server = answering
    forwarder = Forwarder(f"{server.base}/mcp", server.token)
    try:
        forwarder.initialize()
        assert forwarder.process.stdin is not None
        chunk = "x" * (1024 * 1024)
        for _ in range(MCP_MESSAGE_BYTES // len(chunk) + 1):
            forwarder.process.stdin.write(chunk)
        forwarder.process.stdin.write("\n")
        forwarder.process.stdin.flush()
        refused = forwarder.reply(None)["error"]
        assert refused["code"] == -32600 and str(MCP_MESSAGE_BYTES) in refused["message"]
        forwarder.send(_call(2))
        assert _answered(forwarder.reply(2))
    finally:
        forwarder.close()


class _CuttingProxy:
    """A TCP proxy on 127.0.0.1 to ``port`` that can cut every connection it carries, as a
    load balancer cutting long streams does, while new connections still pass, or drop the
    connection the next request goes out on. It names the server's port in ``Host`` (``dsh
    mcp --http`` refuses another; both are ephemeral ports, five digits, so the request keeps
    its length)."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        self.drops = 0  # requests still to be dropped with their connection
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                near, _ = self.server.accept()
            except OSError:
                return
            far = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.open += [near, far]
            host = (f"127.0.0.1:{self.port}".encode(), f"127.0.0.1:{self.target}".encode())
            for source, sink, rename in ((near, far, host), (far, near, None)):
                threading.Thread(target=self._pipe, args=(source, sink, rename),
                                 daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket,
              rename: tuple[bytes, bytes] | None) -> None:
        try:
            while data := source.recv(65536):
                if rename is not None and self._dropping():  # nothing of it reaches the server
                    break
                sink.sendall(data.replace(*rename) if rename is not None else data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _dropping(self) -> bool:
        with self.lock:
            due, self.drops = self.drops > 0, max(0, self.drops - 1)
        return due

    def drop_next(self) -> None:
        """The next request from the client, on whichever connection, is not passed on and
        its connection is closed unanswered (a balancer that let go of that connection, or
        was still cutting as it came)."""
        with self.lock:
            self.drops += 1

    def cut(self) -> None:
        """Cut the connections carried now (not those that come while it cuts)."""
        with self.lock:
            ends, self.open = self.open, []
        for end in ends:
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.server.close()
        self.cut()


def test_one_stream_cut_on_the_way_is_that_calls_error_and_the_session_goes_on():
    """A proxy cutting the connections (the hub still there): the call in flight gets the
    drop error, a ping finds the session alive, and the next call is answered on it."""
    import asyncio

    from harness.mcp_util import jsonl_desk

    server = HttpServer("--wait", "60")
    proxy = _CuttingProxy(server.port)
    assert len(str(proxy.port)) == len(str(server.port))
    forwarder = Forwarder(f"http://127.0.0.1:{proxy.port}/mcp", server.token)

    async def main() -> dict[str, Any]:
        async with jsonl_desk() as desk:
            await asyncio.to_thread(forwarder.initialize)
            forwarder.send(_call(2))
            await desk.event("question/requested")
            proxy.cut()
            dropped = await asyncio.to_thread(forwarder.reply, 2)
            assert "dropped while this request was in flight" in dropped["error"]["message"]
            forwarder.send(_call(3))
            again = await desk.event("question/requested")
            await desk.answer(again, [{"id": "db", "selected": ["SQLite"]}])
            return await asyncio.to_thread(forwarder.reply, 3)

    try:
        assert _answered(asyncio.run(asyncio.wait_for(main(), 60)))
        assert not any("lost the hub" in line for line in forwarder.err.seen)
        assert forwarder.close() == 0
        assert forwarder.err.next() is None  # nothing said: the session never ended
    finally:
        forwarder.close()
        proxy.close()
        server.stop()


def test_a_connection_closed_as_a_request_goes_out_is_no_lost_hub(answering):
    """A proxy closing the connection a request goes out on, unanswered (one it let go of,
    or still cutting as it came): a ping, a read and a notification are sent once more on another
    connection and answered on the same session; a call, which the hub may have had, gets
    the drop error and is not sent twice; the next call is answered, and nothing is said
    (before: "lost the hub" and a new session each time, the call sent again there)."""
    proxy = _CuttingProxy(answering.port)
    forwarder = Forwarder(f"http://127.0.0.1:{proxy.port}/mcp", answering.token)
    try:
        forwarder.initialize()
        forwarder.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert "tools" in forwarder.reply(2)["result"]
        proxy.drop_next()
        forwarder.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert forwarder.reply(3)["result"] == {}
        proxy.drop_next()
        forwarder.send({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        assert "tools" in forwarder.reply(4)["result"]
        proxy.drop_next()
        forwarder.send(_call(5))
        dropped = forwarder.reply(5)
        assert "dropped while this request was in flight (the connection broke before an " \
            "answer" in dropped.get("error", {}).get("message", ""), dropped
        forwarder.send(_call(6))
        assert _answered(forwarder.reply(6))
        proxy.drop_next()
        forwarder.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        forwarder.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})  # goes after it
        assert forwarder.reply(7)["result"] == {}
        assert proxy.drops == 0  # each drop met a request
        assert forwarder.close() == 0
        assert forwarder.err.next() is None  # nothing said: the session never ended
    finally:
        forwarder.close()
        proxy.close()
