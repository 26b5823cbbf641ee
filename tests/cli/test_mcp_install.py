"""``dsh mcp install AGENT`` run for real: each agent's file parsed back and checked key by key.

What each agent reads is written out here, from that agent's own schema or docs (see
``dsh_cli/mcp_server/install/agents.py``), rather than asked of the code under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

TOOL_RULE = "mcp__dsh__ask_user_question"
FETCH_RULE = "mcp__dsh__get_user_answer"
HOUR_MS = 3_600_000
AGENTS = ("claude", "codex", "gemini", "opencode", "cursor", "vscode")


@pytest.fixture
def where(tmp_path):
    """A HOME and a project directory of the test's own."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def install(where, *args: str) -> subprocess.CompletedProcess[str]:
    home, project = where
    env = {name: value for name, value in os.environ.items() if name != "XDG_CONFIG_HOME"}
    env["HOME"] = str(home)
    return subprocess.run([DSH, "mcp", "install", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def command(scope: str = "user") -> list[str]:
    """The absolute path of the dsh that ran install; a project's files name `dsh`, which
    is this dsh on the tests' PATH (a teammate's PATH finds their own)."""
    return ["dsh"] if scope == "project" else [os.path.abspath(DSH)]


def load(path: Path):
    text = path.read_text(encoding="utf-8")
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def stdio_entry(entry: dict, scope: str, **extra) -> None:
    assert entry["command"] == command(scope)[0]
    assert entry["args"] == ["mcp"]
    for key, value in extra.items():
        assert entry[key] == value, key


def check_claude(base: Path, scope: str) -> list[Path]:
    servers = base / (".claude.json" if scope == "user" else ".mcp.json")
    stdio_entry(load(servers)["mcpServers"]["dsh"], scope, type="stdio", timeout=HOUR_MS)
    settings = load(base / ".claude" / "settings.json")
    assert TOOL_RULE in settings["permissions"]["allow"]
    assert FETCH_RULE in settings["permissions"]["allow"]
    # `claude -p` waits for its servers only when MCP_CONNECTION_NONBLOCKING is false (as
    # read in the 2.1.197 binary); then up to MCP_CONNECT_TIMEOUT_MS
    assert settings["env"]["MCP_CONNECTION_NONBLOCKING"] == "0"
    assert int(settings["env"]["MCP_CONNECT_TIMEOUT_MS"]) >= 20_000
    if scope == "user":
        return [servers, base / ".claude" / "settings.json"]
    # a project's .mcp.json is approved where claude itself records it, not in the shared file
    assert "enabledMcpjsonServers" not in settings
    local = base / ".claude" / "settings.local.json"
    assert load(local) == {"enabledMcpjsonServers": ["dsh"]}
    return [servers, base / ".claude" / "settings.json", local]


def check_codex(base: Path, scope: str) -> list[Path]:
    path = base / ".codex" / "config.toml"
    entry = load(path)["mcp_servers"]["dsh"]
    stdio_entry(entry, scope, tool_timeout_sec=3600)
    assert entry["required"] is True  # else `codex exec` may ask the model before dsh is up
    assert entry["startup_timeout_sec"] >= 20
    assert entry["tools"]["ask_user_question"]["approval_mode"] == "approve"
    assert entry["tools"]["get_user_answer"]["approval_mode"] == "approve"
    return [path]


def check_gemini(base: Path, scope: str) -> list[Path]:
    path = base / ".gemini" / "settings.json"
    stdio_entry(load(path)["mcpServers"]["dsh"], scope, timeout=HOUR_MS, trust=True)
    return [path]


def check_opencode(base: Path, scope: str) -> list[Path]:
    path = base / ".config" / "opencode" / "opencode.json" if scope == "user" \
        else base / "opencode.json"
    config = load(path)
    assert config["mcp"]["dsh"] == {"type": "local", "command": [*command(scope), "mcp"],
                                    "enabled": True, "timeout": HOUR_MS}
    assert config["permission"]["dsh_ask_user_question"] == "allow"
    assert config["permission"]["dsh_get_user_answer"] == "allow"
    return [path]


def check_cursor(base: Path, scope: str) -> list[Path]:
    path = base / ".cursor" / "mcp.json"
    stdio_entry(load(path)["mcpServers"]["dsh"], scope)
    return [path]


def check_vscode(base: Path, scope: str) -> list[Path]:
    path = base / ".config" / "Code" / "User" / "mcp.json" if scope == "user" \
        else base / ".vscode" / "mcp.json"
    stdio_entry(load(path)["servers"]["dsh"], scope, type="stdio")
    return [path]


CHECKS = {"claude": check_claude, "codex": check_codex, "gemini": check_gemini,
          "opencode": check_opencode, "cursor": check_cursor, "vscode": check_vscode}


def files_under(*roots: Path) -> set[Path]:
    return {path for root in roots for path in root.rglob("*") if path.is_file()}


@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize("agent", AGENTS)
def test_install_writes_what_the_agent_reads(where, agent, scope):
    done = install(where, agent, "--scope", scope)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    home, project = where
    written = CHECKS[agent](home if scope == "user" else project, scope)
    assert files_under(home, project) == set(written)  # nothing else touched
    for path in written:
        assert f"dsh: wrote {path}: " in done.stdout
        assert f"in {path} " in done.stdout.split("to undo: ", 1)[1]  # and how to undo it


def test_user_is_the_default_scope(where):
    done = install(where, "gemini")
    assert done.returncode == 0, done.stderr
    check_gemini(where[0], "user")


# one file per agent with the user's own entries in it, where dsh's keys go too
EXISTING = {
    "claude": (".claude/settings.json", {"permissions": {"allow": ["Bash(git status)"],
                                                         "deny": ["WebFetch"]},
                                         "env": {"MCP_CONNECT_TIMEOUT_MS": "45000"},
                                         "model": "opus"}),
    "codex": (".codex/config.toml", None),  # TOML: see CODEX_CONFIG
    "gemini": (".gemini/settings.json", {"mcpServers": {"other": {"command": "other-mcp"}},
                                         "theme": "GitHub"}),
    "opencode": (".config/opencode/opencode.json",
                 {"$schema": "https://opencode.ai/config.json",
                  "mcp": {"other": {"type": "local", "command": ["other-mcp"]}},
                  "permission": {"bash": "ask"}}),
    "cursor": (".cursor/mcp.json", {"mcpServers": {"other": {"command": "other-mcp"}}}),
    "vscode": (".config/Code/User/mcp.json",
               {"servers": {"other": {"type": "stdio", "command": "other-mcp"}},
                "inputs": [{"id": "key", "type": "promptString"}]}),
}
CODEX_CONFIG = """\
# my codex settings
model = "o3"  # the one I like

[mcp_servers.other]
command = "other-mcp"
args = ["--quiet"]
"""


@pytest.mark.parametrize("agent", AGENTS)
def test_install_merges_into_an_existing_file_and_keeps_the_users_entries(where, agent):
    home, _ = where
    relative, before = EXISTING[agent]
    path = home / relative
    path.parent.mkdir(parents=True)
    path.write_text(CODEX_CONFIG if before is None else json.dumps(before), encoding="utf-8")
    done = install(where, agent)
    assert done.returncode == 0, done.stderr
    CHECKS[agent](home, "user")
    after = load(path)
    if agent == "codex":
        assert path.read_text().startswith(CODEX_CONFIG)  # comments and layout kept
        assert after["model"] == "o3"
        assert after["mcp_servers"]["other"] == {"command": "other-mcp", "args": ["--quiet"]}
    elif agent == "claude":
        assert after["permissions"] == {"allow": ["Bash(git status)", TOOL_RULE, FETCH_RULE],
                                        "deny": ["WebFetch"]}
        assert after["env"] == {"MCP_CONNECT_TIMEOUT_MS": "45000",  # the user's own wait
                                "MCP_CONNECTION_NONBLOCKING": "0"}
        assert after["model"] == "opus"
    else:
        for key, value in before.items():
            if isinstance(value, dict):
                for name, entry in value.items():
                    assert after[key][name] == entry, f"{key}.{name}"
            else:
                assert after[key] == value, key


@pytest.mark.parametrize("agent", AGENTS)
def test_a_file_that_cannot_be_parsed_is_refused_and_nothing_is_written(where, agent):
    home, project = where
    relative, _ = EXISTING[agent]
    path = home / relative
    path.parent.mkdir(parents=True)
    garbage = "[mcp_servers.dsh\ncommand = " if agent == "codex" else '{"mcpServers": {'
    path.write_text(garbage, encoding="utf-8")
    done = install(where, agent)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"dsh: CONFIG_ERROR: {path} is not valid ")
    assert done.stderr.endswith("; nothing was written\n")
    assert done.stderr.count("\n") == 1
    assert path.read_text(encoding="utf-8") == garbage
    assert files_under(home, project) == {path}  # not even the agent's other file


def test_a_key_on_the_way_that_is_not_a_table_is_refused(where):
    home, _ = where
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": ["not", "a", "table"]}')
    done = install(where, "cursor")
    assert done.returncode == 2
    assert done.stderr == (f"dsh: CONFIG_ERROR: {home / '.cursor' / 'mcp.json'} mcpServers "
                           "is not a table; nothing was written\n")


@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize("agent", AGENTS)
def test_print_shows_and_writes_nothing(where, agent, scope):
    done = install(where, agent, "--scope", scope, "--print")
    assert done.returncode == 0, done.stderr
    home, project = where
    assert files_under(home, project) == set()
    assert done.stdout.startswith(f"# {home if scope == 'user' else project}")
    assert command(scope)[0] in done.stdout


@pytest.mark.parametrize("agent", AGENTS)
def test_installing_twice_changes_nothing(where, agent):
    first = install(where, agent, "--scope", "project")
    assert first.returncode == 0, first.stderr
    home, project = where
    paths = sorted(files_under(home, project))
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in paths}
    again = install(where, agent, "--scope", "project")
    assert again.returncode == 0, again.stderr
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in paths} == before
    assert sorted(files_under(home, project)) == paths
    for path in paths:
        assert f"dsh: {path} already has dsh; unchanged" in again.stdout


def test_a_files_mode_is_kept(where):
    home, _ = where
    path = home / ".claude.json"
    path.write_text('{"userID": "secret-ish"}')
    path.chmod(0o600)
    assert install(where, "claude").returncode == 0
    assert path.stat().st_mode & 0o777 == 0o600
    assert load(path)["userID"] == "secret-ish"


def test_an_unknown_agent_is_a_usage_error(where):
    done = install(where, "emacs")
    assert done.returncode == 2
    assert "'emacs' is not one of" in done.stderr


def test_install_imports_neither_the_mcp_sdk_nor_pydantic(where):
    """Writing a config file is small work: none of what serving MCP needs is loaded."""
    home, project = where
    env = {name: value for name, value in os.environ.items() if name != "XDG_CONFIG_HOME"}
    env.update(HOME=str(home), PYTHONPROFILEIMPORTTIME="1")
    done = subprocess.run([DSH, "mcp", "install", "codex", "--print"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "tomlkit" in imported  # the profile is real: the TOML library was loaded
    assert not imported & {"mcp", "pydantic", "sqlite3", "prompt_toolkit", "anyio"}
