"""A hostile local HTTP client against a real `dsh ask --web` child on 127.0.0.1: the
cookie it is given, a body that never ends, a browser that hangs up mid-POST."""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from harness.dsh_under_test import REAL_DSH

WAIT = 30
INTERRUPTED = "dsh: ASK_ABORTED: interrupted by SIGTERM\n"  # dsh ask's own last line


class WebChild:
    """`dsh ask --web` as a child; stderr collected in a thread (never left undrained)."""

    def __init__(self, tmp_path: Path, env: dict[str, str] | None = None,
                 drain: bool = True) -> None:
        self.process = subprocess.Popen(
            [REAL_DSH, "ask", "--web", "--no-open", "-q", "Deploy?", "-o", "yes", "-o", "no"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})})
        assert self.process.stderr is not None
        line = self.process.stderr.readline().decode()
        match = re.match(r"dsh: open http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        assert match, line
        self.port, self.token = int(match[1]), match[2]
        self.authority = f"127.0.0.1:{self.port}"
        self.lines: list[str] = []
        self._pump = threading.Thread(target=self._read_stderr, daemon=True)
        if drain:  # else stderr is a pipe nobody reads
            self._pump.start()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.lines.append(raw.decode("utf-8", "replace"))

    def request(self, method: str, path: str, headers: dict[str, str],
                body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            connection.request(method, path, body=body, headers={"Host": self.authority,
                                                                  **headers})
            response = connection.getresponse()
            return (response.status, {k.lower(): v for k, v in response.getheaders()},
                    response.read())
        finally:
            connection.close()

    def log_in(self) -> str:
        status, headers, _ = self.request("GET", f"/?token={self.token}", {})
        assert status == 303
        return headers["set-cookie"].split(";")[0]

    def post_headers(self, cookie: str) -> dict[str, str]:
        status, _, page = self.request("GET", "/", {"Cookie": cookie})
        assert status == 200
        csrf = re.search(rb'name="dsh-csrf" content="([^"]+)"', page)[1].decode()
        return {"Cookie": cookie, "Origin": f"http://{self.authority}", "X-DSH-CSRF": csrf,
                "Content-Type": "application/json"}

    def stop(self) -> tuple[int, list[str]]:
        """SIGTERM, the exit status and every stderr line."""
        if self.process.poll() is None:
            self.process.terminate()
        status = self.process.wait(timeout=WAIT)
        if self._pump.is_alive():
            self._pump.join(timeout=WAIT)
        return status, self.lines

    def peak_kib(self) -> int:
        """The child's peak resident memory so far (VmHWM), in KiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1])

    def hang_up_mid_post(self, cookie: str) -> None:
        """A POST that promises 100,000 bytes, sends 10 and closes the connection."""
        headers = self.post_headers(cookie)
        with socket.create_connection(("127.0.0.1", self.port), timeout=WAIT) as sock:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            sock.sendall((f"POST /api/respond HTTP/1.1\r\nHost: {self.authority}\r\n{head}"
                          "Content-Length: 100000\r\n\r\n").encode() + b'{"type": "q')

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def web(tmp_path):
    started: list[WebChild] = []

    def start(**kwargs) -> WebChild:
        started.append(WebChild(tmp_path, **kwargs))
        return started[-1]

    yield start
    for child in started:
        child.kill()


def test_the_session_cookie_holds_no_token_and_the_raw_token_is_no_cookie(web):
    child = web()
    cookie = child.log_in()
    name, _, value = cookie.partition("=")
    assert name == f"dsh_{child.port}"
    assert child.token not in cookie and len(value) == 64  # HMAC-SHA256, hex
    assert child.request("GET", "/", {"Cookie": cookie})[0] == 200
    assert child.request("GET", "/", {"Cookie": f"{name}={child.token}"})[0] == 403
    assert child.stop()[0] == 143


def _until(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_browser_hanging_up_mid_post_is_one_debug_line_or_nothing(web):
    quiet, chatty = web(), web(env={"DSH_DEBUG": "1"})
    for child in (quiet, chatty):
        cookie = child.log_in()
        for _ in range(3):
            child.hang_up_mid_post(cookie)
    hung_up = "dsh: debug: the browser hung up during POST /api/respond\n"
    _until(lambda: chatty.lines.count(hung_up) == 3, "three debug lines")
    time.sleep(0.5)  # the quiet child has had the same time to say something
    for child in (quiet, chatty):
        assert child.request("GET", "/", {"Cookie": child.log_in()})[0] == 200
    assert quiet.stop() == (143, [INTERRUPTED])
    assert chatty.stop() == (143, [hung_up] * 3 + [INTERRUPTED])


def test_a_stderr_pipe_nobody_reads_never_blocks_the_host(web):
    child = web(env={"DSH_DEBUG": "1"}, drain=False)  # every hang-up writes a line
    cookie = child.log_in()
    for _ in range(2000):  # ~110 KB of debug lines: more than a pipe holds
        child.hang_up_mid_post(cookie)
    assert child.request("GET", "/", {"Cookie": cookie})[0] == 200  # the loop still serves
    sent = time.monotonic()
    status, _ = child.stop()
    print(f"SIGTERM to exit with a full stderr pipe: {time.monotonic() - sent:.3f} s")
    assert status == 143


def test_a_huge_content_length_is_413_before_any_body_is_read(web):
    child = web()
    headers = child.post_headers(child.log_in())
    with socket.create_connection(("127.0.0.1", child.port), timeout=WAIT) as sock:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock.sendall((f"POST /api/respond HTTP/1.1\r\nHost: {child.authority}\r\n{head}"
                      "Content-Length: 400000000\r\n\r\n").encode())  # and no body at all
        reply = ""
        while "BAD_FRAME" not in reply and (data := sock.recv(65536)):
            reply += data.decode("latin-1")
    assert reply.startswith("HTTP/1.1 413 ")
    assert '"code":"BAD_FRAME"' in reply.replace(" ", "")
    assert child.stop()[0] == 143


def test_a_200_mb_chunked_body_is_cut_at_the_cap_with_bounded_memory(web):
    child = web()
    headers = child.post_headers(child.log_in())
    before = child.peak_kib()
    replies: list[str] = []

    def hostile() -> None:
        with socket.create_connection(("127.0.0.1", child.port), timeout=WAIT) as sock:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            sock.sendall((f"POST /api/respond HTTP/1.1\r\nHost: {child.authority}\r\n"
                          f"{head}Transfer-Encoding: chunked\r\n\r\n").encode())
            chunk = b"%x\r\n%s\r\n" % (1_000_000, b"[" * 1_000_000)
            try:
                for _ in range(200):
                    sock.sendall(chunk)
                sock.sendall(b"0\r\n\r\n")
            except OSError:
                pass  # the server stopped reading at the cap and hung up: expected
            try:
                replies.append(sock.recv(65536).decode("latin-1"))
            except OSError:
                replies.append("")

    sender = threading.Thread(target=hostile)
    sender.start()
    sender.join(timeout=WAIT)
    assert not sender.is_alive()
    peak = child.peak_kib()
    print(f"peak RSS (VmHWM) after a 200 MB body: {peak // 1024} MiB "
          f"(before the request: {before // 1024} MiB)")
    assert replies and replies[0].startswith("HTTP/1.1 413 "), replies
    assert peak - before < 60 * 1024  # KiB: never more than a little past the 1 MB cap
    assert child.request("GET", "/", {"Cookie": child.log_in()})[0] == 200
    assert child.stop()[0] == 143
