"""Rules and hints across the real process boundary: ``dsh run`` against a lying raw server.

The server (``tests/fakes/mcp_lying_server.py``) lists what each test hands it and
logs every call it receives, so "ran" means the server really ran it. ``--answers`` gives
the run no one to ask: a call that needs a human fails with ``NO_PERMISSION_PROVIDER``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fakes.mcp_lying_server import entry_for
from harness.dsh_under_test import DSH


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def lying(tmp_path: Path, name: str, tools: list[dict[str, object]]) -> dict[str, object]:
    """An ``mcpServers`` entry for a lying server (``name`` is the key it is put under)."""
    return entry_for(tmp_path, tools)


def ran(tmp_path: Path) -> list[str]:
    log = tmp_path / "ran.log"
    return log.read_text().split() if log.exists() else []


def run(tmp_path: Path, servers: dict[str, object], calls: list[str],
        *flags: str) -> subprocess.CompletedProcess[str]:
    config = write(tmp_path / "servers.json", {"mcpServers": servers})
    turn = {"tool_calls": [{"name": name, "arguments": {}} for name in calls]}
    model = "script:" + write(tmp_path / "script.json", {"turns": [turn, {"content": "done"}]})
    answers = write(tmp_path / "answers.json", {})
    return subprocess.run([DSH, "run", "-m", model, "--mcp-config", config, "--answers",
                           answers, *flags, "go"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def tool(name: str, **annotations: bool) -> dict[str, object]:
    return {"name": name, "description": f"the {name} tool",
            "inputSchema": {"type": "object", "properties": {}}, "annotations": annotations}


def test_a_tool_claiming_read_only_and_destructive_is_destructive_and_asks(tmp_path):
    servers = {"lying": lying(tmp_path, "lying", [
        tool("wipe", readOnlyHint=True, destructiveHint=True), tool("peek", readOnlyHint=True)])}
    result = run(tmp_path, servers, ["mcp__lying__wipe", "mcp__lying__peek"])
    assert result.returncode == 0, result.stderr
    assert ran(tmp_path) == ["peek"]  # the contradiction was not allowed by default


def test_a_server_rule_allows_that_server_only_never_one_whose_name_extends_it(tmp_path):
    servers = {"git": lying(tmp_path, "git", [tool("status")]),
               "git_": lying(tmp_path, "git_", [tool("x")])}
    for rule in ("mcp__git", "mcp__git__*"):
        (tmp_path / "ran.log").unlink(missing_ok=True)
        result = run(tmp_path, servers, ["mcp__git__status", "mcp__git___x"], "--allow", rule)
        assert result.returncode == 0, result.stderr
        assert ran(tmp_path) == ["status"], rule  # git_'s x needed a human: not run


def test_a_rule_for_the_longer_server_name_allows_its_tool(tmp_path):
    servers = {"git": lying(tmp_path, "git", [tool("status")]),
               "git_": lying(tmp_path, "git_", [tool("x")])}
    result = run(tmp_path, servers, ["mcp__git__status", "mcp__git___x"], "--allow", "mcp__git_")
    assert result.returncode == 0, result.stderr
    assert ran(tmp_path) == ["x"]


def test_deny_rules_that_cannot_match_each_say_so_with_the_close_match(tmp_path):
    servers = {"raw": lying(tmp_path, "raw", [tool("write"), tool("read", readOnlyHint=True)])}
    result = run(tmp_path, servers, ["mcp__raw__read"], "--deny", "MCP__raw__write",
                 "--deny", "mcp__RAW", "--deny", "mcp__raw__", "--deny", "mcp__raw__wrte",
                 "--deny", "mcp__elsewhere")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("dsh: warning:")]
    assert warnings == [
        "dsh: warning: the rule deny 'MCP__raw__write' matches no tool: did you mean "
        "'mcp__raw__write'? (nothing is denied by it)",
        "dsh: warning: the rule deny 'mcp__RAW' matches no tool: did you mean 'mcp__raw'? "
        "(nothing is denied by it)",
        "dsh: warning: the rule deny 'mcp__raw__' matches no tool: did you mean 'mcp__raw'? "
        "(nothing is denied by it)",
        "dsh: warning: the rule deny 'mcp__raw__wrte' matches no tool: did you mean "
        "'mcp__raw__write'? (nothing is denied by it)",
        "dsh: warning: the rule deny 'mcp__elsewhere' matches no tool: no server it names is "
        "configured (nothing is denied by it)",
    ]  # a flag is for this run: a server it names must be configured
    assert ran(tmp_path) == ["read"]


def test_rules_that_match_say_nothing(tmp_path):
    servers = {"raw": lying(tmp_path, "raw", [tool("write"), tool("read", readOnlyHint=True)])}
    result = run(tmp_path, servers, ["mcp__raw__write"], "--deny", "mcp__raw__write",
                 "--allow", "mcp__raw", "--allow", "mcp__raw__*", "--allow", "mcp__*__read")
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr and ran(tmp_path) == []


def warnings_of(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("dsh: warning:")]


def test_every_flag_rule_that_cannot_match_an_offered_tool_gets_one_line(tmp_path):
    servers = {"raw": lying(tmp_path, "raw", [tool("write"), tool("read", readOnlyHint=True)])}
    result = run(tmp_path, servers, ["mcp__raw__read"], "--deny", "raw", "--deny", "write",
                 "--deny", "bash(rm:*)", "--deny", "Read(~/.ssh/**)", "--deny", "mcp__elsewhere",
                 "--allow", "ask_user_question", "--deny", "raw")
    assert result.returncode == 0, result.stderr
    agent = ("a tool of Claude Code, whose calls reach dsh through approve_tool_use (a rule for "
             "them goes in config.toml)")
    assert warnings_of(result) == [
        "dsh: warning: the rule deny 'raw' matches no tool: did you mean 'mcp__raw' (or "
        "'mcp__raw__*', its tools)? (nothing is denied by it)",
        "dsh: warning: the rule deny 'write' matches no tool: did you mean 'mcp__raw__write'? "
        "(nothing is denied by it)",
        "dsh: warning: the rule deny 'bash(rm:*)' matches no tool of dsh's agent: did you mean "
        f"'Bash'? That is {agent} (nothing is denied by it)",
        f"dsh: warning: the rule deny 'Read(~/.ssh/**)' matches no tool of dsh's agent: {agent} "
        "(nothing is denied by it)",
        "dsh: warning: the rule deny 'mcp__elsewhere' matches no tool: no server it names is "
        "configured (nothing is denied by it)",
        "dsh: warning: the rule allow 'ask_user_question' matches nothing: ask_user_question "
        "never needs permission",
    ]  # the second --deny raw is the same line, said once
    assert ran(tmp_path) == ["read"]


def test_a_rule_of_config_toml_is_reported_only_when_approve_tool_use_cannot_use_it_either(
        tmp_path, dsh_home):
    (dsh_home / "config.toml").write_text(
        '[permissions]\ndeny = ["Bash(rm:*)", "Read(~/.ssh/**)", "mcp__elsewhere", "raw", '
        '"bash(rm:*)"]\n')
    servers = {"raw": lying(tmp_path, "raw", [tool("read", readOnlyHint=True)])}
    result = run(tmp_path, servers, ["mcp__raw__read"])
    assert result.returncode == 0, result.stderr
    assert warnings_of(result) == [
        "dsh: warning: the rule deny 'raw' matches no tool: did you mean 'mcp__raw' (or "
        "'mcp__raw__*', its tools)? (nothing is denied by it)",
        "dsh: warning: the rule deny 'bash(rm:*)' matches no tool: did you mean 'Bash(rm:*)'? "
        "(tool names are case-sensitive) (nothing is denied by it)",
    ]


def test_with_no_server_a_rule_still_says_it_matches_nothing(tmp_path):
    result = run(tmp_path, {}, [], "--no-mcp", "--deny", "raw")
    assert result.returncode == 0, result.stderr
    assert warnings_of(result) == [
        "dsh: warning: the rule deny 'raw' matches no tool of dsh's agent (its tools are "
        "mcp__SERVER__TOOL; ask_user_question never needs permission) (nothing is denied by it)"]


def test_a_specifier_dsh_cannot_read_denies_the_whole_tool_and_allows_nothing(tmp_path):
    servers = {"raw": lying(tmp_path, "raw", [tool("write"), tool("read", readOnlyHint=True),
                                              tool("peek")])}
    result = run(tmp_path, servers, ["mcp__raw__read", "mcp__raw__write", "mcp__raw__peek"],
                 "--deny", "mcp__raw__read(path:/etc)", "--allow", "mcp__raw__peek(x)")
    assert result.returncode == 0, result.stderr
    assert warnings_of(result) == [
        "dsh: warning: the rule deny 'mcp__raw__read(path:/etc)' has a specifier dsh does not "
        "read (so it denies every mcp__raw__read call)",
        "dsh: warning: the rule allow 'mcp__raw__peek(x)' has a specifier dsh does not read "
        "(so it allows nothing)",
    ]
    assert ran(tmp_path) == []  # read denied, write and peek asked (and nobody can answer)


def test_dsh_chat_reports_them_the_same_way(tmp_path):
    servers = {"raw": lying(tmp_path, "raw", [tool("read", readOnlyHint=True)])}
    config = write(tmp_path / "servers.json", {"mcpServers": servers})
    model = "script:" + write(tmp_path / "script.json", {"turns": [{"content": "hello"}]})
    result = subprocess.run([DSH, "chat", "--plain", "-m", model, "--mcp-config", config,
                             "--deny", "raw", "--deny", "bash(rm:*)"], input="hi\n",
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert [line.split(" matches ")[0] for line in warnings_of(result)] == [
        "dsh: warning: the rule deny 'raw'", "dsh: warning: the rule deny 'bash(rm:*)'"]
    assert "did you mean 'mcp__raw'" in result.stderr and "did you mean 'Bash'" in result.stderr
