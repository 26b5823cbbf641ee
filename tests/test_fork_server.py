"""The suite's fork server (``harness/forkserver.py``) gives a test the dsh a real start gives.

A dsh the tests start through ``DSH`` is forked by the worker's server from a process that has
imported the SDKs once; these tests hold it to the real start (``REAL_DSH``): the same output and
exit status, signals passed on, its pipes closed when it ends, nothing left behind when its
launcher is killed, and a real start wherever a fork could differ (a terminal, another Python
setting).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import socket
import struct
import subprocess
import termios
import time

import pytest
from harness.dsh_under_test import DSH, REAL_DSH

CEILING = 60.0
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}}) + "\n"


def _server_pid() -> int:
    """The fork server's pid, from its socket's peer credentials."""
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        link.connect(os.environ["DSH_TEST_FORKSERVER"])
        credentials = link.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                      struct.calcsize("3i"))
    finally:
        link.close()
    return struct.unpack("3i", credentials)[0]


def _children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as listed:
        return {int(word) for word in listed.read().split()}


def _until(condition, what: str):
    deadline = time.monotonic() + CEILING
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"not within {CEILING} s: {what}")


@pytest.fixture(scope="module")
def server_pid() -> int:
    if "DSH_TEST_FORKSERVER" not in os.environ:
        pytest.skip("DSH_TEST_REAL_STARTS=1: every dsh of this run starts for real")
    _until(lambda: os.path.exists(os.environ["DSH_TEST_FORKSERVER"]),
           "the fork server listens")
    return _server_pid()


def _serving(command: str, server_pid: int, **popen) -> tuple[subprocess.Popen[bytes], int]:
    """``dsh mcp`` answering ``initialize``, and the pid of the process that answered."""
    before = _children(server_pid)
    popen.setdefault("stderr", subprocess.PIPE)
    process = subprocess.Popen([command, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               **popen)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(INITIALIZE.encode())
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    forked = _children(server_pid) - before
    return process, forked.pop() if forked else process.pid


def test_a_dsh_the_tests_start_is_forked_and_says_and_exits_as_a_real_start_does(server_pid):
    for args in (["--version"], ["no-such-command"], ["ask", "--help"]):
        forked = subprocess.run([DSH, *args], capture_output=True, timeout=CEILING)
        real = subprocess.run([REAL_DSH, *args], capture_output=True, timeout=CEILING)
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            real.returncode, real.stdout, real.stderr), args
    ended = []
    for command in (DSH, REAL_DSH):  # stdout a pipe nobody reads: the flush at exit fails
        reader, writer = os.pipe()
        os.close(reader)
        try:
            done = subprocess.run([command, "ask", "--help"], stdout=writer,
                                  stderr=subprocess.PIPE, timeout=CEILING)
        finally:
            os.close(writer)
        ended.append((done.returncode, done.stderr))
    assert ended[0] == ended[1]
    process, pid = _serving(DSH, server_pid)
    assert pid != process.pid  # the launcher's pid is not the dsh's: this dsh was forked
    # the launcher holds no copy of the dsh's pipes: they end when the dsh does
    assert {os.readlink(f"/proc/{process.pid}/fd/{fd}") for fd in (0, 1, 2)} == {os.devnull}
    assert process.stdin is not None and process.stdout is not None
    process.stdin.close()
    assert process.stdout.read() == b""
    assert process.wait(CEILING) == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_launcher_ends_the_dsh_as_it_ends_a_real_one(server_pid, signum):
    codes = []
    for command in (DSH, REAL_DSH):
        process, _ = _serving(command, server_pid)
        process.send_signal(signum)
        codes.append(process.wait(CEILING))
        process.stdin.close()  # type: ignore[union-attr]
    assert codes[0] == codes[1] != 0


def test_a_killed_launcher_takes_its_forked_dsh_with_it(server_pid):
    process, pid = _serving(DSH, server_pid)
    process.kill()
    assert process.wait(CEILING) == -signal.SIGKILL
    _until(lambda: pid not in _children(server_pid), "the forked dsh is gone")
    process.stdin.close()  # type: ignore[union-attr]


def test_a_terminal_or_another_python_setting_gets_a_real_start(server_pid):
    process, pid = _serving(DSH, server_pid, env={**os.environ, "PYTHONWARNINGS": "default"})
    assert pid == process.pid
    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
        assert REAL_DSH.encode() in cmdline.read()  # the launcher became the real start
    process.kill()
    process.wait(CEILING)
    leader, follower = pty.openpty()
    try:
        for popen in ({"stderr": follower},  # a terminal on a standard descriptor
                      {"start_new_session": True,  # or only as the controlling terminal
                       "preexec_fn": lambda: fcntl.ioctl(follower, termios.TIOCSCTTY, 0)}):
            process, pid = _serving(DSH, server_pid, **popen)
            assert pid == process.pid, popen
            process.kill()
            process.wait(CEILING)
        process, pid = _serving(DSH, server_pid, start_new_session=True)
        assert pid != process.pid  # another session without a terminal changes nothing
        process.kill()
        process.wait(CEILING)
    finally:
        os.close(leader)
        os.close(follower)
