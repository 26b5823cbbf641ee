"""The options shared by several commands, checked by click before anything starts."""

from __future__ import annotations

import subprocess

import pytest
from harness.dsh_under_test import DSH


@pytest.mark.parametrize("command", [["web"], ["ask", "--web"], ["mcp", "--web"]],
                         ids=["web", "ask-web", "mcp-web"])
@pytest.mark.parametrize("port", ["70000", "-1"], ids=["too-high", "negative"])
def test_a_port_outside_0_to_65535_is_a_usage_error(command, port):
    """Before, ``--port 70000`` was taken modulo 65536: the page was served on port 4464."""
    run = subprocess.run([DSH, *command, "--port", port], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stderr
    assert f"Invalid value for '--port': {port} is not in the range 0<=x<=65535" in run.stderr
