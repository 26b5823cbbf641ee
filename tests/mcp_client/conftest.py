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
def oauth_server():
    """One OAuth-protected server (``tests/fakes/oauth_mcp_server.py`` with no option) for
    every login test that needs nothing else of it: each test has its own ``DSH_HOME``, so
    its own client registration and tokens; the server's start-up (the SDK's) is paid once."""
    from harness.oauth_login import protected_server

    with protected_server() as url:
        yield url
