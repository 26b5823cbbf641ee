"""MCP servers for the client tests: ours (``tests/fakes/mcp_notes_server.py``) and real ones."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest


@pytest.fixture
def real_server():
    """The command of a third-party server from PyPI (the test extras install them)."""

    def find(name: str) -> str:
        path = shutil.which(name) or str(Path(sys.executable).with_name(name))
        if not Path(path).exists():
            pytest.fail(f"{name} is not installed: pip install -e '.[test]' brings it")
        return path

    return find


@pytest.fixture(scope="session")
def raw_form_http():
    """The ``mcpServers`` entry of one ``raw_form_server.py --http`` for every test of a
    worker that only needs its forms: it keeps nothing between calls (a form's round is in
    the client's ``requestState``), and its start-up (the SDK's) is paid once."""
    import subprocess

    from mcp_client import raw_form_server

    process = subprocess.Popen([sys.executable, raw_form_server.__file__, "--http"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield raw_form_server.http_entry(url)
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def oauth_fake():
    """One OAuth-protected server (``tests/fakes/oauth_mcp_server.py``) for every login test
    of a worker: each test has its own ``DSH_HOME`` (so its own client registration and
    tokens) and its own mode and record file (``in_mode``); the server's start-up (the
    SDK's) is paid once."""
    from harness.oauth_login import running_protected_server

    with running_protected_server() as server:
        yield server


@pytest.fixture
def oauth_server(oauth_fake):
    """The shared OAuth-protected server's URL, in its plain mode (no option)."""
    from harness.oauth_login import in_mode

    with in_mode(oauth_fake):
        yield oauth_fake.url


@pytest.fixture
def protected_mode(oauth_fake):
    """``protected_mode(*options)``: the shared server as if started with ``options``, for
    the ``with`` block (its record file one of the test's own)."""
    from functools import partial

    from harness.oauth_login import in_mode

    return partial(in_mode, oauth_fake)
