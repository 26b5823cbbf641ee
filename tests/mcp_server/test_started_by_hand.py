"""``dsh mcp`` started by a human at a terminal says what it waits for; stdout stays MCP."""

from __future__ import annotations

import os
import pty
import select
import subprocess

import pytest
from harness.dsh_under_test import DSH

pytestmark = pytest.mark.skipif(DSH is None, reason="the dsh console script is not installed")

NOTICE = b"dsh: mcp waits for an agent on stdin"


def _first_line(stream, timeout: float = 10.0) -> bytes:
    ready, _, _ = select.select([stream], [], [], timeout)
    assert ready, "dsh mcp wrote nothing on stderr"
    return os.read(stream.fileno(), 4096)


def test_stdin_a_terminal_gets_one_stderr_line_on_how_to_attach():
    primary, secondary = pty.openpty()
    try:
        server = subprocess.Popen([DSH, "mcp"], stdin=secondary, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        os.close(secondary)
        try:
            first = _first_line(server.stderr)
            # how it ends on a signal is tests/mcp's business (SIGTERM/SIGINT within 1 s)
            server.kill()
            out, rest = server.communicate(timeout=10)
        finally:
            if server.poll() is None:
                server.kill()
    finally:
        os.close(primary)
    err = first + rest
    assert err.startswith(NOTICE) and err.count(b"\n") == 1, err
    assert b"`dsh attach`" in err and b"ctrl-c to quit" in err
    assert out == b""  # nothing but MCP messages ever reach stdout


def test_stdin_a_pipe_from_an_agent_gets_no_notice():
    server = subprocess.run([DSH, "mcp"], input=b"", capture_output=True, timeout=20)
    assert NOTICE not in server.stderr and server.stdout == b""
