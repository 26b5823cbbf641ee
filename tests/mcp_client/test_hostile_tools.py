"""A server that lies in its tool names, results and forms, through a real ``dsh run``:
the run goes on with one line for each lie, what is stored stays small, and so does dsh
(``spec/mcp.md`` section 4, "A peer cannot hurt dsh")."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness.dsh_under_test import REAL_DSH
from mcp_client.hostile_tools_server import entry

from dsh_cli.core.limits import MESSAGE_VALUES, RESULT_CHARACTERS, RESULT_ITEMS

CEILING = 120
MIB = 1024 * 1024
GROWTH = 100 * MIB  # what an attack may add to dsh's peak resident memory, at most
# under the 16 MiB whole-message guard, so the cut (not the guard) is what is tested
BIG_TEXT = 15_000_000
MANY_ITEMS = 500_000


@dataclass
class Run:
    returncode: int
    stderr: str
    events: list[dict[str, Any]]
    peak: int  # bytes: dsh's peak resident set (its own, from wait4)
    stored: int  # bytes: sessions.db and its WAL after the run


def dsh_run(home: Path, servers: dict[str, Any], turns: list[dict[str, Any]],
            *flags: str) -> Run:
    """``dsh run --jsonl`` with ``servers`` and a scripted model, its peak RSS measured."""
    config = home / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    script = home / "model.json"
    script.write_text(json.dumps({"turns": turns}))
    with open(home / "out", "w+") as out, open(home / "err", "w+") as err:
        process = subprocess.Popen(
            [REAL_DSH, "run", "--jsonl", "--model", f"script:{script}", "--mcp-config",
             str(config), "--allow", "mcp__*", *flags, "go"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            env={**os.environ, "DSH_HOME": str(home)})
        try:
            _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage
        finally:
            process.returncode = 0  # reaped above; Popen must not wait again
        out.seek(0)
        err.seek(0)
        events = [json.loads(line) for line in out.read().splitlines()]
        stderr = err.read()
    stored = sum(path.stat().st_size for path in home.glob("sessions.db*"))
    return Run(os.waitstatus_to_exitcode(status), stderr, events, usage.ru_maxrss * 1024,
               stored)


def calling(tool: str, **arguments: Any) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": tool, "arguments": arguments}]}, {"content": "done"}]


def of_type(run: Run, kind: str) -> list[dict[str, Any]]:
    return [event for event in run.events if event["type"] == kind]


def dsh_lines(run: Run) -> list[str]:
    return [line for line in run.stderr.splitlines() if line.startswith("dsh: ")]


@pytest.fixture(scope="module")
def idle(tmp_path_factory) -> Run:
    """The same run against an honest answer: the baseline each attack is measured from."""
    run = dsh_run(tmp_path_factory.mktemp("idle"), {"h": entry({"tools": ["t"]})},
                  calling("mcp__h__t"))
    assert run.returncode == 0, run.stderr
    assert [result["content"] for result in of_type(run, "tool/result")] == ["xx"]
    return run


def test_bad_and_colliding_tool_names_are_left_out_with_one_line_each(tmp_path):
    servers = {
        "a": entry({"tools": ["_x", "ok", "ok", "has space", "bell\a", "é", "n" * 300, ""]}),
        "a_": entry({"tools": ["x", "fine"]}),  # mcp__a___x is server a's "_x" already
    }
    # the model asks for a tool nobody has: the error lists every name it was offered
    run = dsh_run(tmp_path, servers, [
        {"tool_calls": [{"name": "mcp__a___x", "arguments": {}},
                        {"name": "none", "arguments": {}}]},
        {"content": "done"}])
    assert run.returncode == 0, run.stderr
    assert "INTERNAL_ERROR" not in run.stderr
    assert sorted(dsh_lines(run)) == sorted([
        'dsh: INVALID_TOOL_NAME: MCP server a: left out 5 tools whose name is empty or as '
        'mcp__a__TOOL does not fit [A-Za-z0-9_-]{1,64} (the first: "has space")',
        'dsh: DUPLICATE_TOOL: MCP server a: left out 1 tool whose name is offered already '
        '(the first: "mcp__a__ok")',
        'dsh: DUPLICATE_TOOL: MCP server a_: left out 1 tool whose name is offered already '
        '(the first: "mcp__a___x")'])
    first, unknown = of_type(run, "tool/result")
    assert first["content"] == "xx" and first["error"] is None  # server a's, the first
    offered = unknown["error"]["message"].split("(available: ")[1].rstrip(")").split(", ")
    assert sorted(name for name in offered if name.startswith("mcp__")) == [
        "mcp__a___fine", "mcp__a___x", "mcp__a__ok"]
    assert of_type(run, "turn/completed")


def test_a_result_without_its_result_type_is_a_complete_one(tmp_path):
    # 2026-07-28: a client MUST treat an absent resultType as "complete"; the SDK's check
    # of the era's surface failed the call (MCP_UNAVAILABLE, a pydantic dump) without dsh's
    run = dsh_run(tmp_path, {"h": entry({"tools": ["t"], "call": {"bare": "done"}})},
                  calling("mcp__h__t"))
    assert run.returncode == 0, run.stderr
    [result] = of_type(run, "tool/result")
    assert (result["content"], result["error"]) == ("done", None), run.stderr
    assert not dsh_lines(run), run.stderr


def test_a_result_that_does_not_fit_the_schema_fails_that_call_in_one_line(tmp_path):
    # the server runs on: its next call answers (it was MCP_UNAVAILABLE, a pydantic dump
    # quoting the server's values)
    # a number where the schema has a string
    plan = {"tools": ["bad", "ok"], "calls": {"bad": {"bare": 5}, "ok": {"text": 2}}}
    run = dsh_run(tmp_path, {"h": entry(plan)}, [*calling("mcp__h__bad")[:1],
                                                 *calling("mcp__h__ok")])
    assert run.returncode == 0, run.stderr
    bad, ok = of_type(run, "tool/result")
    assert bad["error"] == {"name": "ToolError", "code": "MCP_TOOL_ERROR", "message": (
        "bad on h failed: its result does not fit the MCP schema "
        "(CallToolResult.content.0.TextContent.text: Input should be a valid string)")}
    assert (ok["content"], ok["error"]) == ("xx", None)


def test_a_huge_text_result_is_cut_marked_and_stays_small(tmp_path, idle):
    run = dsh_run(tmp_path, {"h": entry({"tools": ["t"], "call": {"text": BIG_TEXT}})},
                  calling("mcp__h__t"))
    assert run.returncode == 0, run.stderr
    [result] = of_type(run, "tool/result")
    text, _, mark = result["content"].rpartition("\n")
    assert text == "x" * RESULT_CHARACTERS
    assert mark == (f"[dsh cut this result at {RESULT_CHARACTERS} characters and "
                    f"{RESULT_ITEMS} content items: {BIG_TEXT - RESULT_CHARACTERS} more "
                    "characters not shown]")
    assert of_type(run, "turn/completed")
    assert run.stored < idle.stored + 2 * MIB  # one cut copy, not the server's 15 MB
    assert run.peak - idle.peak < GROWTH, f"peak {run.peak / MIB:.0f} MiB"


def test_full_size_lies_build_no_more_than_a_short_line_in_one_run(tmp_path, idle):
    # each one line the SDK's parse built whole before (1,310, 332 and 251 MiB); one run,
    # one call after another, so its peak bounds each; the last ends the connection
    calls = {"items": {"items": MANY_ITEMS}, "enum": {"enum": 1_000_000},
             "properties": {"properties": 100_000}, "values": {"values": 3_000_000}}
    turns = [{"tool_calls": [{"name": f"mcp__h__{tool}", "arguments": {}}]} for tool in calls]
    run = dsh_run(tmp_path, {"h": entry({"tools": list(calls), "calls": calls})},
                  [*turns, {"content": "done"}])
    assert run.returncode == 0, run.stderr
    assert run.peak - idle.peak < GROWTH, f"peak {run.peak / MIB:.0f} MiB"
    items, enum, properties, values = of_type(run, "tool/result")
    text, _, mark = items["content"].rpartition("\n")
    assert text == "\n".join(["y"] * RESULT_ITEMS)
    assert mark == (f"[dsh cut this result at {RESULT_CHARACTERS} characters and "
                    f"{RESULT_ITEMS} content items: {MANY_ITEMS - RESULT_ITEMS} more content "
                    "items not shown]")
    assert not of_type(run, "question/requested")
    for refused in (enum, properties):
        assert refused["error"]["code"] == "MCP_TOOL_ERROR"
        assert ("dsh cannot ask this form: requestedSchema: over 256 KiB as JSON"
                in refused["error"]["message"])
    assert values["error"]["code"] == "MCP_UNAVAILABLE"
    assert dsh_lines(run) == [
        f"dsh: MCP_UNAVAILABLE: MCP server h sent a message of over {MESSAGE_VALUES} JSON "
        "values; its connection is closed"]
    assert of_type(run, "turn/completed")


def test_a_request_state_over_the_cap_is_not_stored_and_one_line_says_so(tmp_path, idle):
    # a server that asks again every round, each time with a 2 MB state: ten batches
    form = {"type": "object", "properties": {"a": {"type": "string"}}}
    run = dsh_run(tmp_path, {"h": entry({"tools": ["t"],
                                         "call": {"form": form, "state": 2_000_000}})},
                  calling("mcp__h__t"))
    assert run.returncode == 0, run.stderr
    assert len(of_type(run, "question/requested")) == 10
    assert dsh_lines(run) == [
        "dsh: MCP_STATE_NOT_STORED: h sent a requestState over 1 MiB for t: it is not "
        "stored, so its form cannot be resumed after dsh stops"]
    [result] = of_type(run, "tool/result")
    assert "asked for input more than 10 times" in result["error"]["message"]
    assert run.stored < idle.stored + 1 * MIB  # not 10 x 2 MB


# big enough that building questions of it took hundreds of MB (a 9 MB enum: 885 MB), small
# enough that the SDK's own parse of the message (about 1 KB per value) stays under GROWTH
@pytest.mark.parametrize("call", [{"enum": 200_000}, {"properties": 30_000}],
                         ids=["2-MB-enum", "30000-properties"])
def test_a_form_over_the_cap_is_refused_before_a_question_is_built(tmp_path, idle, call):
    run = dsh_run(tmp_path, {"h": entry({"tools": ["t"], "call": call})}, calling("mcp__h__t"))
    assert run.returncode == 0, run.stderr
    assert not of_type(run, "question/requested")
    [result] = of_type(run, "tool/result")
    assert result["error"]["code"] == "MCP_TOOL_ERROR"
    assert ("dsh cannot ask this form: requestedSchema: over 256 KiB as JSON"
            in result["error"]["message"])
    assert of_type(run, "turn/completed")
    assert run.peak - idle.peak < GROWTH, f"peak {run.peak / MIB:.0f} MiB"
