"""``approve_tool_use`` never lets a built program name past a deny rule, nor a bare allow.

Raw JSON-RPC to a real ``dsh mcp`` over stdio, ``allow = ["Bash"]`` beside deny rules, nobody
at the desk (so "ask" comes back as a denial that says no one is there). Each attack command
is first run by the real shell in a folder of its own, to show it really deletes VICTIM.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fakes.shell_shims import shell_path
from harness.tasks_wire import StdioDsh

NOBODY = "denied: no one is at the dsh desk"
# each deletes VICTIM under bash, and ``Bash(rm:*)`` must deny it
BASH_ATTACKS = ["rm${IFS}VICTIM", "rm$IFS'VICTIM'", "r$@m VICTIM", "rm$x VICTIM",
                "rm${IFS}-rf${IFS}VICTIM", "x=rm; $x VICTIM", "/usr/bin/r? VICTIM",
                "env$IFS'rm' VICTIM", '"$(echo rm)" VICTIM', "x=nv; e$x rm VICTIM"]
ZSH_ATTACKS = ["=rm VICTIM", "rm$x VICTIM"]  # zsh's ``=cmd`` is cmd's full path
# the deny rule's program cannot come out of these, yet no rule can say what they run
ASKED = ['"$x"y VICTIM', '"$x".sh VICTIM', 'x"$(echo y)"z VICTIM']
ARGUMENTS = ["git${IFS}push origin", "git $x origin", "git pu$x origin", "git$IFS'push'"]
ALLOWED = ["ls -la", "git status $HOME", "echo \"$HOME\"", "git pull $x"]


def deletes(shell: str, command: str, folder: Path) -> bool:
    """Whether ``shell -c command`` deletes VICTIM in ``folder`` (the real rm runs)."""
    folder.mkdir()
    (folder / "VICTIM").write_text("still here\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder)}
    subprocess.run([shell, "-c", command], cwd=folder, env=env, capture_output=True,
                   stdin=subprocess.DEVNULL, timeout=20)
    return not (folder / "VICTIM").exists()


def decided(commands: list[str], cwd: Path) -> dict[str, str]:
    """allow, deny (a rule said no) or ask (nobody was at the desk) for each command."""
    found = {}
    previous = Path.cwd()
    os.chdir(cwd)
    dsh = StdioDsh("--wait", "0.2")  # "ask" is the nobody-at-the-desk denial after the wait
    os.chdir(previous)
    try:
        dsh.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "claude-code", "version": "1.0"}})
        dsh.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for command in commands:
            reply = dsh.request("tools/call", {"name": "approve_tool_use", "arguments": {
                "tool_name": "Bash", "input": {"command": command}}})
            data = json.loads(reply["result"]["content"][0]["text"])
            found[command] = ("allow" if data["behavior"] == "allow" else
                              "ask" if data["message"].startswith(NOBODY) else "deny")
    finally:
        dsh.close()
    return found


@pytest.fixture
def rules(dsh_home):
    (dsh_home / "config.toml").write_text(
        '[permissions]\nallow = ["Bash"]\ndeny = ["Bash(rm:*)", "Bash(git push:*)"]\n')


def test_a_built_program_that_may_be_rm_is_denied_under_a_bare_bash_allow(rules, tmp_path):
    for index, command in enumerate(BASH_ATTACKS):
        assert deletes("/bin/bash", command, tmp_path / f"bash{index}"), command
    zsh = shell_path("zsh")
    if zsh is not None:
        for index, command in enumerate(ZSH_ATTACKS):
            assert deletes(zsh, command, tmp_path / f"zsh{index}"), command
    commands = [*BASH_ATTACKS, *ZSH_ATTACKS, *ARGUMENTS]
    assert decided(commands, tmp_path) == dict.fromkeys(commands, "deny")


def test_a_built_program_that_cannot_be_rm_is_asked_never_allowed(rules, tmp_path):
    verdicts = decided([*ASKED, *ALLOWED], tmp_path)
    assert verdicts == {**dict.fromkeys(ASKED, "ask"), **dict.fromkeys(ALLOWED, "allow")}
