"""``approve_tool_use`` under Claude Code's other specifiers: ``Read``/``Edit`` paths (the
gitignore patterns of code.claude.com/docs/en/permissions), ``WebFetch(domain:…)``,
``Bash(rm *)``, and a specifier dsh cannot read; each through a real ``dsh mcp`` over stdio,
with no desk, so a call no rule allows is denied with "no one is at the dsh desk"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH
from harness.mcp_util import bounded, client

ASKED = "no one is at the dsh desk"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder with an ``.ssh`` key in it, the ``~`` of the dsh mcp under test."""
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_ed25519").write_text("KEY")
    (folder / "notes.txt").write_text("notes")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def configure(dsh_home: Path, *, allow: list[str] = (), deny: list[str] = (),
              ask: list[str] = ()) -> None:
    (dsh_home / "config.toml").write_text(
        f"[permissions]\nallow = {json.dumps(list(allow))}\nask = {json.dumps(list(ask))}\n"
        f"deny = {json.dumps(list(deny))}\n")


def outcomes(calls: list[tuple[str, dict]], cwd: Path) -> list[str]:
    """Each call's behavior, ``deny: WHY`` shortened to the rule or "asked"."""
    async def main():
        async with client(cwd=str(cwd)) as mcp:
            return [await mcp.call_tool("approve_tool_use", {"tool_name": name, "input": args})
                    for name, args in calls]

    results = []
    for result in bounded(main()):
        outcome = json.loads(result.content[0].text)
        if outcome["behavior"] == "allow":
            results.append("allow")
        elif ASKED in outcome["message"]:
            results.append("asked")
        else:
            results.append("deny " + outcome["message"].split("the rule deny ")[-1])
    return results


def test_a_read_rule_denies_every_tool_that_reads_the_folder_even_with_read_allowed(
        dsh_home, home, tmp_path):
    configure(dsh_home, allow=["Read", "Grep", "Glob", "LS"], deny=["Read(~/.ssh/**)"])
    ssh = home / ".ssh"
    calls = [("Read", {"file_path": str(ssh / "id_ed25519")}),
             ("Read", {"file_path": str(home / "notes.txt")}),
             ("Grep", {"pattern": "KEY", "path": str(home)}),  # holds .ssh: denied
             ("Grep", {"pattern": "KEY", "path": str(ssh)}),
             ("Glob", {"pattern": str(ssh / "*")}),
             ("Glob", {"pattern": "**/*", "path": str(home)}),
             ("LS", {"path": str(ssh)}),
             ("NotebookRead", {"notebook_path": str(ssh / "id_ed25519")}),
             ("Grep", {"pattern": "x", "path": str(tmp_path / "elsewhere")})]
    rule = "deny 'Read(~/.ssh/**)'"
    assert outcomes(calls, tmp_path) == [rule, "allow", rule, rule, rule, rule, rule, rule,
                                         "allow"]


def test_a_link_to_a_denied_file_is_denied(dsh_home, home, tmp_path):
    configure(dsh_home, allow=["Read"], deny=["Read(~/.ssh/**)"])
    link = tmp_path / "innocent.txt"
    link.symlink_to(home / ".ssh" / "id_ed25519")
    assert outcomes([("Read", {"file_path": str(link)})], tmp_path) == [
        "deny 'Read(~/.ssh/**)'"]


def test_an_edit_rule_covers_every_tool_that_writes(dsh_home, home, tmp_path):
    locked = tmp_path / "locked"
    configure(dsh_home, allow=["Edit"], deny=[f"Edit(/{locked}/**)"])
    calls = [(tool, {key: str(locked / "x.txt"), "content": "", "old_string": "",
                     "new_string": "", "edits": []})
             for tool, key in (("Edit", "file_path"), ("Write", "file_path"),
                               ("MultiEdit", "file_path"), ("NotebookEdit", "notebook_path"))]
    calls.append(("Write", {"file_path": str(tmp_path / "free.txt"), "content": ""}))
    calls.append(("Read", {"file_path": str(locked / "x.txt")}))  # an Edit rule: not reads
    rule = f"deny 'Edit(/{locked}/**)'"
    assert outcomes(calls, tmp_path) == [rule, rule, rule, rule, "allow", "asked"]


def test_paths_relative_to_the_project_root_the_working_directory_and_at_any_depth(
        dsh_home, home, tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    sub = project / "sub"
    sub.mkdir()
    configure(dsh_home, allow=["Read"], deny=["Read(/private/**)", "Read(.env)",
                                             "Read(./build/*.log)"])
    calls = [("Read", {"file_path": str(project / "private" / "a")}),  # the repository's root
             ("Read", {"file_path": str(sub / "private" / "a")}),  # the working directory
             ("Read", {"file_path": str(sub / "deep" / "er" / ".env")}),  # any depth
             ("Read", {"file_path": str(sub / "build" / "x.log")}),
             ("Read", {"file_path": str(sub / "build" / "x.txt")}),
             ("Read", {"file_path": str(project / ".env")}),  # above the working directory
             ("Read", {"file_path": "../private/b"})]  # relative to the agent's cwd
    assert outcomes(calls, sub) == [
        "deny 'Read(/private/**)'", "deny 'Read(/private/**)'", "deny 'Read(.env)'",
        "deny 'Read(./build/*.log)'", "allow", "allow", "deny 'Read(/private/**)'"]


def test_an_allow_rule_with_a_path_allows_only_what_it_names(dsh_home, home, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    configure(dsh_home, allow=["Read(./src/**)", "Edit(./src/**)", "Grep(./src/**)"])
    calls = [("Read", {"file_path": str(src / "a.py")}),
             ("Read", {"file_path": str(tmp_path / "b.py")}),
             ("Edit", {"file_path": str(src / "a.py")}),
             ("Write", {"file_path": str(tmp_path / "b.py")}),
             ("Grep", {"pattern": "x", "path": str(tmp_path)})]  # reads outside src too
    assert outcomes(calls, tmp_path) == ["allow", "asked", "allow", "asked", "asked"]


def test_webfetch_domains(dsh_home, home, tmp_path):
    configure(dsh_home, allow=["WebFetch(domain:docs.example)"],
              deny=["WebFetch(domain:evil.example)"])
    calls = [("WebFetch", {"url": url, "prompt": "p"}) for url in (
        "https://evil.example/x", "https://api.EVIL.example./x", "https://docs.example/a",
        "https://sub.docs.example/a", "https://evil.example@docs.example/", "not a url")]
    rule = "deny 'WebFetch(domain:evil.example)'"
    assert outcomes(calls, tmp_path) == [rule, rule, "allow", "asked", "allow", rule]


def test_bash_rm_space_star_is_claude_codes_prefix_form(dsh_home, home, tmp_path):
    configure(dsh_home, allow=["Bash(git status *)"], deny=["Bash(rm *)"])
    calls = [("Bash", {"command": command}) for command in (
        "rm -rf build", "rm", "rmdir build", "git status -s", "git status", "git statusx")]
    rule = "deny 'Bash(rm *)'"
    assert outcomes(calls, tmp_path) == [rule, rule, "asked", "allow", "allow", "asked"]


def test_a_specifier_dsh_cannot_read_denies_the_whole_tool_and_allows_nothing(
        dsh_home, home, tmp_path):
    configure(dsh_home, allow=["WebFetch(docs.example)", "Bash"],
              deny=["WebFetch(evil.example)", "Bash(* --force)", "Grep(~/.ssh/**)"])
    calls = [("WebFetch", {"url": "https://docs.example/", "prompt": "p"}),
             ("Bash", {"command": "ls"}),
             ("Grep", {"pattern": "x", "path": str(tmp_path)})]
    assert outcomes(calls, tmp_path) == [
        "deny 'WebFetch(evil.example)'", "deny 'Bash(* --force)'", "deny 'Grep(~/.ssh/**)'"]


def test_each_rule_that_cannot_apply_is_one_line_on_dsh_mcps_stderr(dsh_home, home):
    configure(dsh_home, allow=["WebFetch(docs.example)", "Read(~/notes.txt)"],
              deny=["bash(rm:*)", "raw", "Read(~/.ssh/**)", "Bash(rm *)", "Grep(~/.ssh/**)",
                    "Bash(* --force)", "mcp__git", "Edit(/etc/**)", "MCP__git"],
              ask=["WebFetch(domain:ok.example)", "Task(x)"])
    done = subprocess.run([DSH, "mcp"], input=b"", capture_output=True, timeout=30)
    lines = done.stderr.decode().splitlines()
    assert lines == [
        "dsh: warning: the rule deny 'bash(rm:*)' matches no tool: did you mean 'Bash(rm:*)'? "
        "(tool names are case-sensitive) (nothing is denied by it)",
        "dsh: warning: the rule deny 'raw' matches no tool: Claude Code's tools start with a "
        "capital letter (Bash, Read, …); an MCP server's are 'mcp__raw' (all of them) or "
        "'mcp__raw__*' (nothing is denied by it)",
        "dsh: warning: the rule deny 'Grep(~/.ssh/**)' has a specifier dsh does not read: did "
        "you mean 'Read(~/.ssh/**)'? (so it denies every Grep call)",
        "dsh: warning: the rule deny 'Bash(* --force)' has a '*' dsh does not read: write "
        "'Bash(CMD)' for that command, 'Bash(CMD *)' or 'Bash(CMD:*)' for any command starting "
        "with it (so it denies every Bash call)",
        "dsh: warning: the rule deny 'Edit(/etc/**)' names '/etc' in the project root (an "
        "absolute path is written '//etc/**') (so it denies every Edit call)",
        "dsh: warning: the rule deny 'MCP__git' matches no tool: rules are case-sensitive and "
        "start with 'mcp__' (nothing is denied by it)",
        "dsh: warning: the rule ask 'Task(x)' has a specifier dsh does not read (so every Task "
        "call is asked)",
        "dsh: warning: the rule allow 'WebFetch(docs.example)' has a specifier dsh does not "
        "read: WebFetch takes 'domain:HOST' (so it allows nothing)",
    ], done.stderr
