"""Bash rules across the process boundary: ``dsh run`` calls a tool that really runs a shell.

The scripted model calls ``mcp__sh__run`` once per command of ``fakes/shell_commands.py``;
the server (``fakes/mcp_shell_server.py``) runs each command it receives under the real
``bash`` or ``zsh`` among recording shims. ``--answers`` leaves nobody to ask, so a call the
rules do not allow never reaches the shell: what ran is exactly what the allow rule allowed,
with exactly the words it saw, and the model was told ``PERMISSION_DENIED`` for each deny.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fakes.mcp_shell_server import entry_for
from fakes.shell_commands import ALLOW, CASES, DENY
from fakes.shell_shims import Sandbox, shell_path
from harness.dsh_under_test import DSH

from dsh_cli.permissions.shell import read_command

TOOL = "mcp__sh__run"


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def dsh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_dsh_run_lets_through_only_what_the_allow_rule_read_and_the_shell_runs_it_so(
        shell, tmp_path):
    if shell_path(shell) is None:
        pytest.skip(f"{shell} is not installed (bash .ci/run installs it)")
    sandbox = Sandbox.make(tmp_path / "sandbox")
    config = write(tmp_path / "servers.json", {"mcpServers": {"sh": entry_for(sandbox.folder,
                                                                              shell)}})
    calls = [{"id": f"c{number}", "name": TOOL, "arguments": {"command": command}}
             for number, (command, _) in enumerate(CASES)]
    model = "script:" + write(tmp_path / "script.json",
                              {"turns": [{"tool_calls": calls}, {"content": "done"}]})
    rules = [flag for spec in ALLOW for flag in ("--allow", f"{TOOL}({spec})")]
    rules += [flag for spec in DENY for flag in ("--deny", f"{TOOL}({spec})")]
    result = dsh("run", "-m", model, "--mcp-config", config, "--answers",
                 write(tmp_path / "answers.json", {}), *rules, "go")
    assert result.returncode == 0, result.stderr

    ran_log = sandbox.folder / "ran.jsonl"
    ran = [json.loads(line) for line in ran_log.read_text().splitlines()]
    allowed = [command for command, expected in CASES if expected == "allow"]
    assert sorted(entry["command"] for entry in ran) == sorted(allowed)
    for entry in ran:
        [words] = read_command(entry["command"]).commands
        assert [tuple(argv) for argv in entry["executed"]] == [words], entry

    listed = json.loads(dsh("sessions", "list", "--json").stdout)
    latest = (listed if isinstance(listed, list) else listed["sessions"])[0]["id"]
    shown = json.loads(dsh("sessions", "show", "--json", latest).stdout)
    codes = {}
    for message in shown["messages"]:
        if message["role"] == "tool":
            try:
                data = json.loads(str(message["content"]))
            except ValueError:
                data = {}
            error = data.get("error", {}) if isinstance(data, dict) else {}
            codes[message["tool_call_id"]] = error.get("code")
    expected_codes = {"allow": None, "ask": "NO_PERMISSION_PROVIDER",
                      "deny": "PERMISSION_DENIED"}
    assert codes == {f"c{number}": expected_codes[expected]
                     for number, (_, expected) in enumerate(CASES)}
