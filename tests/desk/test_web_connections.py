"""The connections a real ``dsh attach --web`` takes are bounded: a request must come whole
within ``WEB_REQUEST_SECONDS``, a flood of half-sent requests gives way to the human's, and
failing ``accept()`` calls are one rate-limited ``dsh:`` line, never a traceback each.

The desk runs as a child; its descriptor limit is lowered from outside (``prlimit``) to
what the flood is measured against, as a 1,024-file limit was in the attack. A flood's
connections are opened all at once, as an attacker's would be: one after another, each that
found the listening queue full waited a second for its SYN to be sent again. The tests that
wait for the request timeout shorten it (``DSH_WEB_REQUEST_SECONDS``) to ``SHORT``.
"""

from __future__ import annotations

import http.client
import os
import queue
import resource
import selectors
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

from harness.dsh_under_test import REAL_DSH

from dsh_cli.core.limits import WEB_CONNECTIONS_PER_CLIENT, WEB_REQUEST_SECONDS
from dsh_cli.providers.web.connections import request_seconds

HALF = "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"  # the head, without its blank line
REQUEST_SECONDS = "DSH_WEB_REQUEST_SECONDS"
SHORT = 2.0  # the request timeout of the tests that wait for it


class WebDeskProcess:
    """``dsh attach --web`` as a child: its URL, pid and stderr lines as they come."""

    def __init__(self, request_seconds: float | None = None) -> None:
        env = {key: value for key, value in os.environ.items()
               if key not in ("DISPLAY", REQUEST_SECONDS)}
        if request_seconds is not None:
            env[REQUEST_SECONDS] = str(request_seconds)
        self.process = subprocess.Popen([REAL_DSH, "attach", "--web"], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self.line_with("dsh: open ").split()[-1]
        parts = urlsplit(self.url)
        self.port = parts.port
        self.token = parts.query.removeprefix("token=")

    def _read(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.lines.put(raw.decode("utf-8", "replace"))
        self.lines.put("")

    def line_with(self, text: str, within: float = 30.0) -> str:
        """The first stderr line holding ``text``; fails after ``within`` seconds, or at a
        traceback."""
        end = time.monotonic() + within
        while True:
            line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            self.seen.append(line)
            assert line, f"the desk ended: {self.seen}"
            assert "Traceback" not in line and "out of system resource" not in line, self.seen
            if text in line:
                return line

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def limit_descriptors(self, soft: int) -> None:
        _, hard = resource.prlimit(self.process.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(self.process.pid, resource.RLIMIT_NOFILE, (soft, hard))

    def stop(self) -> list[str]:
        """End the desk; every stderr line it wrote."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=30)
        while (line := self.lines.get(timeout=30)) != "":
            self.seen.append(line)
        return self.seen


@contextmanager
def web_desk(request_seconds: float | None = None):
    desk = WebDeskProcess(request_seconds)
    try:
        yield desk
    finally:
        if desk.process.poll() is None:
            desk.process.kill()
        desk.process.wait(timeout=30)


def half_sent(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(HALF.format(port=port).encode())
    return sock


def flood_of_half_sent(port: int, count: int) -> list[socket.socket]:
    """``count`` connections opened at once, each with a half-sent request once it is open."""
    flood: list[socket.socket] = []
    opening = selectors.DefaultSelector()
    try:
        for _ in range(count):
            sock = socket.socket()
            flood.append(sock)
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))  # in progress (or refused: SO_ERROR says)
            opening.register(sock, selectors.EVENT_WRITE)
        end = time.monotonic() + 30
        while opening.get_map():
            ready = opening.select(max(0.0, end - time.monotonic()))
            assert ready, f"{len(opening.get_map())} connections not open in 30 s"
            for key, _ in ready:
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                opening.unregister(sock)
                assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
                sock.settimeout(30)
                sock.sendall(HALF.format(port=port).encode())
    except BaseException:
        for sock in flood:
            sock.close()
        raise
    finally:
        opening.close()
    return flood


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes ``sock`` (a reset, when it had unread bytes) in time."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_the_request_timeout_is_ten_seconds_unless_the_environment_shortens_it(monkeypatch):
    monkeypatch.delenv(REQUEST_SECONDS, raising=False)
    assert request_seconds() == WEB_REQUEST_SECONDS == 10.0
    monkeypatch.setenv(REQUEST_SECONDS, str(SHORT))
    assert request_seconds() == SHORT


def test_a_request_that_never_comes_whole_is_closed_after_the_request_timeout():
    with web_desk(request_seconds=SHORT) as desk:
        silent = socket.create_connection(("127.0.0.1", desk.port), timeout=30)
        half = half_sent(desk.port)
        start = time.monotonic()
        try:
            # the server closes each: recv() sees the end (old code: a timeout after 30 s),
            # at the shortened timeout, not the default
            closed = [closed_by_server(sock) for sock in (silent, half)]
            took = time.monotonic() - start
        finally:
            silent.close()
            half.close()
        lines = desk.stop()
    assert closed == [True, True]
    assert SHORT - 1 <= took < WEB_REQUEST_SECONDS, took
    assert not [line for line in lines if "Traceback" in line], lines


def test_a_flood_of_half_sent_requests_gives_way_to_the_humans_request():
    with web_desk() as desk:
        desk.limit_descriptors(desk.descriptors() + 150)
        flood = flood_of_half_sent(desk.port, 300)
        try:
            human = http.client.HTTPConnection("127.0.0.1", desk.port, timeout=10)
            human.request("GET", f"/?token={desk.token}")
            status = human.getresponse().status
            human.close()
        finally:
            for sock in flood:
                sock.close()
        lines = desk.stop()
    assert status == 303  # the token swapped for the cookie: the human is in
    assert not [line for line in lines if "Traceback" in line or "resource" in line], lines


def test_accepts_that_fail_for_want_of_descriptors_are_one_dsh_line():
    with web_desk(request_seconds=SHORT) as desk:
        desk.limit_descriptors(desk.descriptors() + 6)  # fewer than the cap: accept() fails
        # one after another: a second's accept takes five, and the listening queue holds 33
        flood = [half_sent(desk.port) for _ in range(50)]
        try:
            said = desk.line_with("cannot take a connection")
            # asyncio retries accept() every second; each connection is taken in time and
            # closed (by the cap, or at its timeout: the last one's): seconds of failing
            # accepts
            assert all(closed_by_server(sock) for sock in flood)
        finally:
            for sock in flood:
                sock.close()
        lines = desk.stop()
    assert said.startswith("dsh: cannot take a connection: Too many open files")
    assert [line for line in lines if "cannot take a connection" in line] == [said], lines
    assert not [line for line in lines if "Traceback" in line or "resource" in line], lines


def test_one_client_holds_at_most_its_share_of_connections():
    with web_desk() as desk:
        base = desk.descriptors()
        flood = flood_of_half_sent(desk.port, WEB_CONNECTIONS_PER_CLIENT + 72)
        try:
            human = http.client.HTTPConnection("127.0.0.1", desk.port, timeout=10)
            human.request("GET", f"/?token={desk.token}")
            status = human.getresponse().status
            held = desk.descriptors()  # the flood came before the human's: all taken now
            human.close()
        finally:
            for sock in flood:
                sock.close()
        desk.stop()
    # every connection the flood made was taken (no descriptor shortage here): the cap of
    # one client address closed the oldest waiting ones as new ones came
    assert held - base <= WEB_CONNECTIONS_PER_CLIENT + 2, (base, held)  # and the human's
    assert status == 303
