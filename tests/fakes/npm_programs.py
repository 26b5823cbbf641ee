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


NPM22_DIR = NPM_DIR.with_name("npm22")
INSTALL22 = "npm ci --no-audit --no-fund --prefix tests/npm22"


def node22_script(package: str, script: str) -> list[str]:
    """``[node22, script]`` for a package of ``tests/npm22`` (the suites that need Node 22,
    run by the Node 22 of the npm ``node`` package there); skips, saying why, when absent."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"{package} needs Node.js and npm, which this machine lacks")
    node = NPM22_DIR / "node_modules" / "node" / "bin" / "node"
    path = NPM22_DIR / "node_modules" / package / script
    if not (node.exists() and path.exists()):
        pytest.skip(f"{package} is not installed: run `{INSTALL22}` (bash .ci/run does)")
    return [str(node), str(path)]
