"""Nothing MCP (nor the team hub) is imported on the other paths: ``--help``, ``dsh ask``,
``dsh schema``, this machine's ``dsh history``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
from dsh_cli.cli import main
try:
    main(sys.argv[1:], prog_name="dsh", standalone_mode=False)
except SystemExit:
    pass
sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""
MCP_MODULES = ("mcp", "mcp_types", "anyio", "dsh_cli.mcp_server", "dsh_cli.desk", "dsh_cli.hub")


@pytest.mark.parametrize("args", [
    ["--help"],
    ["schema"],
    ["ask", "-q", "Deploy?", "-o", "yes", "-o", "no", "--answers", "ANSWERS"],
    ["history"],  # only --hub reads the hub
])
def test_other_commands_import_nothing_mcp(args, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"q1": ["yes"]}))
    args = [str(answers) if arg == "ANSWERS" else arg for arg in args]
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=60)
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("MODULES "))
    modules = json.loads(line.removeprefix("MODULES "))
    loaded = [m for m in modules if any(m == p or m.startswith(p + ".") for p in MCP_MODULES)]
    assert loaded == []


# what answering an agent over stdio needs: the SDK's server, the desk hub, the store; not
# the agent, its models, a terminal UI or a web desk (the SDK's own ``mcp/__init__`` brings
# its client and HTTP stacks, which dsh cannot leave out)
NOT_SERVING = ("prompt_toolkit", "openai", "wcwidth", "playwright", "dsh_cli.agent",
               "dsh_cli.models", "dsh_cli.chat", "dsh_cli.providers.terminal", "dsh_cli.desk.web")


def test_dsh_mcp_over_stdio_imports_only_what_serving_needs(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "imports", "version": "1"}}}
    done = subprocess.run([sys.executable, "-c", PROBE, "mcp", "--answers", str(answers)],
                          input=json.dumps(initialize) + "\n", capture_output=True, text=True,
                          timeout=60)
    assert json.loads(done.stdout.splitlines()[0])["id"] == 1, done.stderr  # it served
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("MODULES "))
    modules = json.loads(line.removeprefix("MODULES "))
    assert "mcp.server.stdio" in modules and "dsh_cli.mcp_server.server" in modules
    loaded = [m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_SERVING)]
    assert loaded == []
