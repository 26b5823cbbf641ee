"""``dsh run`` against a model server that misbehaves, and the one line it must end with."""

from __future__ import annotations

import os
import subprocess

from harness.dsh_under_test import DSH

KEY = "sk-hardening-0123456789abcdef"


def run_against(server) -> subprocess.CompletedProcess:
    env = {**os.environ, "DSH_API_KEY": KEY}
    return subprocess.run(
        [DSH, "run", "--base-url", server.base_url, "-m", "some-model", "--no-input", "hi"],
        capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)


def assert_one_line(result) -> str:
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dsh: MODEL_"), result.stderr
    assert "Traceback" not in result.stderr and "\x1b" not in result.stderr
    assert KEY not in result.stderr
    return lines[0]
