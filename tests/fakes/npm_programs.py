"""The Node MCP programs of ``tests/npm`` (installed by ``.ci/run`` where Node is present)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

NPM_DIR = Path(__file__).resolve().parents[1] / "npm"
INSTALL = "npm ci --no-audit --no-fund --prefix tests/npm"


def npm_program(name: str) -> str:
    """The path of ``node_modules/.bin/NAME``; the test skips, saying why, when it is absent."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"{name} needs Node.js and npm, which this machine lacks")
    program = NPM_DIR / "node_modules" / ".bin" / name
    if not program.exists():
        pytest.skip(f"{name} is not installed: run `{INSTALL}` (bash .ci/run does)")
    return str(program)
