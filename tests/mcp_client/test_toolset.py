"""dsh's MCP client against real servers over stdio: start-up, tools, results, faults."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile

import pytest
from fakes.mcp_notes_server import entry as notes_entry

from dsh_cli.core.signal import AbortSignal
from dsh_cli.interaction import UserInteraction
from dsh_cli.mcp_client import McpToolset, parse_servers
from dsh_cli.permissions import Approvals, PermissionDecision, PermissionGate
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.permission_policy import permission_policy
from dsh_cli.tools.registry import ToolContext


class Human:
    def __init__(self, *decisions):
        self.decisions = list(decisions)
        self.shown = []

    async def decide(self, request, rpc_id):
        self.shown.append((request.tool, request.server, request.hints, request.arguments))
        return self.decisions.pop(0)


async def started(servers: dict, **options):
    reports: list[str] = []
    configs = parse_servers({"mcpServers": servers}, "test.json", {})
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 (open for the session)
    toolset = await McpToolset.start(configs, errlog=errlog, report=reports.append, **options)
    return toolset, reports


def registry_for(toolset, tmp_path, human=None):
    registry = ToolRegistry()
    toolset.register(registry)
    gate = PermissionGate(approvals=Approvals(tmp_path / "permissions.json"))
    if human is not None:
        gate.register_provider(human)
    registry.use(permission_policy(gate, registry.get))
    return registry


def call(registry, name, arguments, signal=None):
    ctx = ToolContext(user_interaction=UserInteraction(), call_id="c1",
                      signal=signal or AbortSignal())
    return registry.execute(name, arguments, ctx)


def test_servers_start_in_parallel_and_a_failing_one_is_left_out(run, tmp_path):
    async def go():
        toolset, reports = await started({
            "notes": notes_entry(),
            "missing": {"command": str(tmp_path / "no-such-server")},
            "slow": {"command": "sleep", "args": ["30"], "startup_timeout": 0.5},
        })
        try:
            names = sorted(tool.name for tool in toolset.tools)
            statuses = {status.name: status for status in toolset.statuses}
            return names, reports, statuses
        finally:
            await toolset.close()

    names, reports, statuses = run(go(), ceiling=30)
    assert "mcp__notes__read_notes" in names and "mcp__notes__write_note" in names
    assert not any("missing" in name or "slow" in name for name in names)
    assert statuses["notes"].started and not statuses["missing"].started
    assert statuses["slow"].error == "MCP server slow did not start within 0.5 s"
    assert len(reports) == 2 and all("\n" not in line for line in reports)
    assert any(line.startswith("MCP server missing failed to start") for line in reports)


def test_results_errors_and_placeholders_reach_the_model(run, tmp_path):
    async def go():
        toolset, _ = await started({"notes": notes_entry()})
        try:
            human = Human(PermissionDecision("allow_session"))
            registry = registry_for(toolset, tmp_path, human)
            read = await call(registry, "mcp__notes__read_notes", "{}")
            write = await call(registry, "mcp__notes__write_note", '{"text": "buy milk"}')
            again = await call(registry, "mcp__notes__read_notes", "")
            failed = await call(registry, "mcp__notes__fail", {})
            picture = await call(registry, "mcp__notes__picture", {})
            bad = await call(registry, "mcp__notes__write_note", "[1]")
            return read, write, again, failed, picture, bad, human.shown
        finally:
            await toolset.close()

    read, write, again, failed, picture, bad, shown = run(go(), ceiling=30)
    assert read.content == "(no notes)" and not read.is_error
    assert write.content == "saved note 1: buy milk"
    assert again.content == "buy milk"
    # only the destructive write was asked about, once for the session (fail and picture
    # carry no hints, so they were asked too: allow_session covered write_note only)
    assert shown[0][:2] == ("mcp__notes__write_note", "notes")
    assert shown[0][2].destructive is True and shown[0][3] == {"text": "buy milk"}
    assert failed.is_error
    assert picture.is_error or "[image: image/png" in picture.content
    assert bad.error["code"] == "INVALID_ARGS"


def test_a_server_that_crashes_mid_call_is_unavailable_and_stays_so(run, tmp_path):
    async def go():
        toolset, _ = await started({"notes": notes_entry()})
        try:
            registry = registry_for(toolset, tmp_path)
            registry._policies.clear()  # this test is about the transport, not permissions
            crashed = await call(registry, "mcp__notes__crash", {})
            await asyncio.sleep(0.2)
            after = await call(registry, "mcp__notes__read_notes", {})
            return crashed, after
        finally:
            await toolset.close()

    crashed, after = run(go(), ceiling=30)
    assert crashed.error["code"] == "MCP_UNAVAILABLE"
    assert after.error["code"] == "MCP_UNAVAILABLE"


def test_a_hanging_call_times_out(run, tmp_path):
    async def go():
        toolset, _ = await started({"notes": notes_entry(tool_timeout=0.5)})
        try:
            registry = registry_for(toolset, tmp_path)
            registry._policies.clear()
            slow = await call(registry, "mcp__notes__hang", {})
            alive = await call(registry, "mcp__notes__read_notes", {})
            return slow, alive
        finally:
            await toolset.close()

    slow, alive = run(go(), ceiling=30)
    assert slow.error["code"] == "MCP_TIMEOUT"
    assert "longer than 0.5 s" in slow.error["message"]
    assert alive.content == "(no notes)"


def test_a_cancelled_turn_cancels_the_call_on_the_server(run, tmp_path):
    mark = tmp_path / "cancelled"

    async def go():
        toolset, _ = await started({"notes": notes_entry(env={"NOTES_CANCELLED": str(mark)})})
        try:
            registry = registry_for(toolset, tmp_path)
            registry._policies.clear()
            signal = AbortSignal()
            task = asyncio.ensure_future(call(registry, "mcp__notes__hang", {}, signal))
            await asyncio.sleep(0.1)
            signal.abort("ctrl-c")
            cancelled = await task
            alive = await call(registry, "mcp__notes__read_notes", {})
            for _ in range(100):  # the server learns of it by notifications/cancelled
                if mark.exists():
                    break
                await asyncio.sleep(0.05)
            return cancelled, alive
        finally:
            await toolset.close()

    cancelled, alive = run(go(), ceiling=30)
    assert cancelled.error["code"] == "ABORTED"
    assert alive.content == "(no notes)"  # the server is still there for the next call
    assert mark.read_text() == "cancelled\n"


def test_mcp_server_time_from_pypi_runs_without_a_prompt(run, tmp_path, real_server):
    command = real_server("mcp-server-time")

    async def go():
        toolset, reports = await started({"time": {"command": command,
                                                   "args": ["--local-timezone", "UTC"]}})
        try:
            registry = registry_for(toolset, tmp_path)  # nobody to ask: read-only must pass
            result = await call(registry, "mcp__time__get_current_time", {"timezone": "UTC"})
            return reports, result
        finally:
            await toolset.close()

    reports, result = run(go(), ceiling=30)
    assert reports == []
    assert not result.is_error and '"timezone": "UTC"' in result.content


def test_mcp_server_git_status_runs_and_reset_asks_and_deny_reaches_the_model(
        run, tmp_path, real_server):
    command = real_server("mcp-server-git")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")

    async def go():
        toolset, _ = await started({"git": {"command": command,
                                            "args": ["--repository", str(repo)]}})
        try:
            human = Human(PermissionDecision("deny", "not today"))
            registry = registry_for(toolset, tmp_path, human)
            status = await call(registry, "mcp__git__git_status", {"repo_path": str(repo)})
            reset = await call(registry, "mcp__git__git_reset", {"repo_path": str(repo)})
            return status, reset, human.shown
        finally:
            await toolset.close()

    status, reset, shown = run(go(), ceiling=30)
    assert not status.is_error and "a.txt" in status.content
    assert [tool for tool, *_ in shown] == ["mcp__git__git_reset"]
    assert reset.error["code"] == "PERMISSION_DENIED"
    assert reset.error["message"].endswith("not today")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_both_protocol_eras_list_the_same_tools(run, mode, monkeypatch):
    from dsh_cli.mcp_client import connection

    original = connection.McpConnection._open

    def with_mode(self):
        client = original(self)
        client.mode = mode
        return client

    monkeypatch.setattr(connection.McpConnection, "_open", with_mode)

    async def go():
        toolset, _ = await started({"notes": notes_entry()})
        try:
            return sorted(tool.name for tool in toolset.tools), toolset.connections[0]
        finally:
            await toolset.close()

    names, _ = run(go(), ceiling=30)
    assert "mcp__notes__write_note" in names


def test_the_shipped_demo_notes_server_reads_freely_and_asks_before_writing(run, tmp_path):
    from dsh_cli.demo_notes import entry

    folder = tmp_path / "notes"

    async def go():
        toolset, reports = await started({"notes": entry(folder)})
        try:
            human = Human(PermissionDecision("allow_once"))
            registry = registry_for(toolset, tmp_path, human)
            empty = await call(registry, "mcp__notes__list_notes", {})
            wrote = await call(registry, "mcp__notes__write_note",
                               {"name": "plan", "text": "ship it"})
            read = await call(registry, "mcp__notes__read_note", {"name": "plan"})
            escape = await call(registry, "mcp__notes__read_note", {"name": "../../etc/passwd"})
            return reports, empty, wrote, read, escape, human.shown
        finally:
            await toolset.close()

    reports, empty, wrote, read, escape, shown = run(go(), ceiling=30)
    assert reports == [] and empty.content == "(no notes yet)"
    assert wrote.content.startswith("saved plan.md")
    assert read.content == "ship it\n" and (folder / "plan.md").read_text() == "ship it\n"
    assert [tool for tool, *_ in shown] == ["mcp__notes__write_note"]
    assert escape.error["code"] == "MCP_TOOL_ERROR" and "bad note name" in escape.error["message"]


def test_a_server_that_answers_garbage_is_reported_and_left_out(run, tmp_path):
    garbage = ("import sys, time\n"
               "for line in sys.stdin:\n"
               "    print('this is not JSON-RPC', flush=True)\n"
               "time.sleep(30)\n")

    async def go():
        toolset, reports = await started({
            "liar": {"command": sys.executable, "args": ["-c", garbage],
                     "startup_timeout": 3},
            "notes": notes_entry()})
        try:
            return reports, {status.name: status for status in toolset.statuses}
        finally:
            await toolset.close()

    reports, statuses = run(go(), ceiling=30)
    assert not statuses["liar"].started and statuses["notes"].started
    assert len(reports) == 1 and reports[0].startswith("MCP server liar ")
