"""``dsh mcp list``: each configured server, whether it started, and its tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fakes.mcp_notes_server import entry
from harness.dsh_under_test import DSH


def dsh(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, "mcp", "list", *args], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def one_time_tool(tmp_path_factory):
    """``dsh mcp list`` of mcp-server-time with one tool kept and an entry whose env names an
    unset variable (its own DSH_HOME): the config and what it showed. One run for the two
    tests that read it, not one each (the run and the server are each about a second of
    CPU)."""
    home = tmp_path_factory.mktemp("one-time-tool-home")
    config = home / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"time": {
        "command": "mcp-server-time", "includeTools": ["get_current_time"],
        "env": {"TOKEN": "${DSH_TEST_UNSET_TOKEN}", "OTHER": "${DSH_TEST_UNSET_TOKEN}",
                "FINE": "${DSH_TEST_UNSET_TOKEN:-default}"}}}}))
    env = {key: value for key, value in os.environ.items() if key != "DSH_TEST_UNSET_TOKEN"}
    return config, dsh("--mcp-config", str(config), env={**env, "DSH_HOME": str(home)})


def test_servers_their_tools_and_one_that_did_not_start(tmp_path):
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": entry(), "time": {"command": "mcp-server-time"},
        "broken": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}}}))
    listed = dsh("--mcp-config", str(config), "--json")
    assert listed.returncode == 1, listed.stderr  # a server did not start: scripts can tell
    servers = {server["name"]: server for server in json.loads(listed.stdout)}
    assert servers["notes"]["started"] and servers["time"]["started"]
    tools = {tool["name"]: tool for tool in servers["notes"]["tools"]}
    assert tools["mcp__notes__read_notes"]["hints"]["read_only"] is True
    assert tools["mcp__notes__write_note"]["hints"]["destructive"] is True
    assert "mcp__time__get_current_time" in {tool["name"] for tool in servers["time"]["tools"]}
    assert not servers["broken"]["started"] and servers["broken"]["error"]
    # the text form of the same: time's tools were read above, so it is left out here
    # (one server child fewer)
    config.write_text(json.dumps({"mcpServers": {
        "notes": entry(), "broken": {"command": sys.executable,
                                     "args": ["-c", "raise SystemExit(3)"]}}}))
    shown = dsh("--mcp-config", str(config))
    assert shown.returncode == 1
    assert "notes  stdio  6 tools" in shown.stdout
    assert "  mcp__notes__write_note  [destructive]" in shown.stdout
    assert "broken  stdio  did not start" in shown.stdout


def test_nothing_configured_says_where_servers_come_from():
    listed = dsh()
    assert listed.returncode == 0
    assert listed.stdout.startswith("no MCP servers configured")
    assert json.loads(dsh("--json").stdout) == []


def test_a_broken_config_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    listed = dsh("--mcp-config", str(bad))
    assert listed.returncode == 2
    assert listed.stderr.startswith("dsh: CONFIG_ERROR: ") and listed.stderr.count("\n") == 1


def test_one_tool_is_said_in_the_singular_and_all_started_is_exit_0(one_time_tool):
    _, shown = one_time_tool
    assert shown.returncode == 0, shown.stderr
    assert "time  stdio  1 tool  (" in shown.stdout


def test_an_untrusted_project_file_is_named_instead_of_nothing_configured(tmp_path):
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": entry()}}))
    listed = dsh(cwd=tmp_path)
    assert listed.returncode == 0
    assert listed.stdout.startswith("no MCP servers to start: this directory's .mcp.json is "
                                    "not trusted yet")
    assert "--mcp-project" in listed.stderr  # the notice that says how to trust it

RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066")  # ESC (CSI, OSC), BEL, 8-bit CSI, bidi


def test_a_servers_hostile_names_and_descriptions_never_reach_the_terminal_raw(tmp_path):
    from fakes.mcp_lying_server import entry_for

    hostile = ["\x1b]0;pwned\x07title", "flip\u202eexe.txt", "ring\x07\x07", "\u2066hide",
               "csi\x9b2J"]
    description = "\x1b[31mred\x1b[0m \x9b2J\u202eevil"
    listing = [{"name": name, "description": description, "inputSchema": {"type": "object"}}
               for name in [*hostile, "ok"]]
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"lying": entry_for(tmp_path, listing)}}))
    shown = dsh("--mcp-config", str(config))
    assert shown.returncode == 0, shown.stderr
    assert "  mcp__lying__ok" in shown.stdout.splitlines()
    for stream in (shown.stdout, shown.stderr):
        assert not any(char in stream for char in RAW), repr(stream)
    listed = dsh("--mcp-config", str(config), "--json")
    assert listed.returncode == 0, listed.stderr
    for stream in (listed.stdout, listed.stderr):
        assert not any(char in stream for char in RAW), repr(stream)
    (server,) = json.loads(listed.stdout)  # still valid JSON, and the values exact
    tools = {tool["name"]: tool for tool in server["tools"]}
    assert tools["mcp__lying__ok"]["description"] == description
    assert set(tools) <= {f"mcp__lying__{name}" for name in [*hostile, "ok"]}


def test_an_unset_variable_in_a_server_entry_is_one_warning(one_time_tool):
    config, shown = one_time_tool
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr == (f"dsh: warning: server 'time' of {config}: "
                            "${DSH_TEST_UNSET_TOKEN} not set, so expanded to nothing\n")
