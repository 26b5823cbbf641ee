"""The MCP conformance suite's client scenarios, run against dsh's own MCP client.

``tests/conformance/dsh_client.py`` is the client under test (dsh's ``McpToolset`` over
Streamable HTTP, elicitation answered through a real ``UserInteraction``); the suite
(``@modelcontextprotocol/conformance`` 0.1.11, from ``tests/npm``) starts each scenario's
server and judges what it saw.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dsh_under_test import ROOT
from fakes.npm_programs import npm_program

CLIENT = Path(__file__).resolve().with_name("dsh_client.py")


@pytest.mark.parametrize("scenario", ["initialize", "elicitation-sep1034-client-defaults"])
def test_dsh_passes_the_client_scenario(scenario):
    conformance = npm_program("conformance")
    result = subprocess.run(
        [conformance, "client", "--command", f"{sys.executable} {CLIENT}",
         "--scenario", scenario],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    said = result.stdout + result.stderr  # the suite reports on either stream
    assert "OVERALL: PASSED" in said and "0 failed" in said, said[-3000:]
