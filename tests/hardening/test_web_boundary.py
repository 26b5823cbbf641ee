"""A hostile local HTTP client against a real `dsh ask --web` child on 127.0.0.1: the
cookie it is given, a body that never ends, a browser that hangs up mid-POST."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import threading
from pathlib import Path

import pytest
from dsh_under_test import DSH

WAIT = 30


class WebChild:
    """`dsh ask --web` as a child; stderr collected in a thread (never left undrained)."""

    def __init__(self, tmp_path: Path, env: dict[str, str] | None = None,
                 stderr: int | None = subprocess.PIPE) -> None:
        self.process = subprocess.Popen(
            [DSH, "ask", "--web", "--no-open", "-q", "Deploy?", "-o", "yes", "-o", "no"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
            env={**os.environ, **(env or {})})
        assert self.process.stderr is not None
        line = self.process.stderr.readline().decode()
        match = re.match(r"dsh: open http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        assert match, line
        self.port, self.token = int(match[1]), match[2]
        self.authority = f"127.0.0.1:{self.port}"
        self.lines: list[str] = []
        self._pump = threading.Thread(target=self._read_stderr, daemon=True)
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
        self._pump.join(timeout=WAIT)
        return status, self.lines

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
