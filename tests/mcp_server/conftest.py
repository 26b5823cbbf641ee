"""Fixtures for desk tests: the desk directory of the test's own ``DSH_HOME``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def runtime_dir(dsh_home):
    """Where this test's servers listen: ``DSH_HOME/run`` (isolated, and short enough)."""
    path = Path(os.environ["DSH_HOME"]) / "run"
    assert len(str(path / "mcp-4194304.sock")) < 104, "Unix socket paths are limited"
    return path
