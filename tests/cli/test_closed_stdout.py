"""A reader that goes away (`dsh … | head -1`) ends dsh quietly with the shell's status."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from harness.dsh_under_test import DSH

from dsh_cli.core.events import EventStream, UserMessage
from dsh_cli.store import SessionStore


def closed_pipe_run(*args: str, tmp_path) -> subprocess.CompletedProcess[str]:
    """Run dsh with stdout a pipe whose reader has already closed it."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([DSH, *args], stdout=write, stderr=subprocess.PIPE, text=True,
                              stdin=subprocess.DEVNULL, timeout=60, cwd=tmp_path)
    finally:
        os.close(write)


@pytest.fixture
def one_session():
    with SessionStore.open() as store:
        session_id = store.create_session("demo")
        stop = store.record(events := EventStream(), session_id)
        events.emit(UserMessage("hello"))
        stop()


@pytest.mark.usefixtures("one_session")
@pytest.mark.parametrize("args", [("sessions", "list"), ("sessions", "list", "--json"),
                                  ("mcp", "list"), ("schema",)])
def test_a_closed_stdout_is_status_141_and_nothing_on_stderr(args, tmp_path):
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    done = closed_pipe_run(*args, tmp_path=tmp_path)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""
