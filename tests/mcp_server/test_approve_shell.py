"""``approve_tool_use`` over real stdio reads a Bash command as the shell does.

One ``dsh mcp`` process, ``[permissions]`` rules in ``config.toml``, nobody at the desk:
each command of ``fakes/shell_commands.py`` is allowed, denied by the rule, or asked (and so
denied because nobody is there), as the table says; every command it allows then runs, under
the real ``bash`` and ``zsh`` among recording shims, exactly the words the rule saw.
"""

from __future__ import annotations

import json

import pytest
from fakes.shell_commands import ALLOW, CASES, DENY
from fakes.shell_shims import Sandbox, shell_path
from harness.mcp_util import bounded, client

from dsh_cli.permissions.shell import read_command

NOBODY = "denied: no one is at the dsh desk"


def outcome(result) -> str:
    """allow, deny (a rule said no) or ask (it needed the human, who was not there)."""
    assert result.is_error is not True
    data = json.loads(result.content[0].text)
    if data["behavior"] == "allow":
        return "allow"
    return "ask" if data["message"].startswith(NOBODY) else "deny"


def test_every_command_of_the_table_is_decided_as_the_shell_reads_it(dsh_home, tmp_path):
    if shell_path("zsh") is None:
        pytest.skip("zsh is not installed (bash .ci/run installs it)")
    allow = ", ".join(json.dumps(f"Bash({spec})") for spec in ALLOW)
    deny = ", ".join(json.dumps(f"Bash({spec})") for spec in DENY)
    (dsh_home / "config.toml").write_text(f"[permissions]\nallow = [{allow}]\ndeny = [{deny}]\n")

    async def main():
        decided = {}
        async with client(name="claude-code") as mcp:
            for command, _ in CASES:
                result = await mcp.call_tool("approve_tool_use", {
                    "tool_name": "Bash", "input": {"command": command}})
                decided[command] = outcome(result)
        return decided

    decided = bounded(main(), ceiling=180)
    assert decided == dict(CASES)
    sandbox = Sandbox.make(tmp_path / "sandbox")
    for command, verdict in decided.items():
        if verdict == "allow":
            [words] = read_command(command).commands
            for shell in ("bash", "zsh"):
                assert sandbox.executed(shell, command) == [words], (shell, command)
