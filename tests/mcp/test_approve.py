"""``approve_tool_use``: Claude Code's permission-prompt-tool contract, decided at the desk."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from mcp_util import bounded, client, jsonl_desk

REQUEST = {"tool_name": "Bash", "input": {"command": "rm -rf build"},
           "tool_use_id": "toolu_01"}


def _outcome(result) -> dict:
    assert result.is_error is not True
    return json.loads(result.content[0].text)


def test_approve_tool_use_is_listed_with_the_contract_schema():
    async def main():
        async with client() as mcp:
            return {tool.name: tool for tool in (await mcp.list_tools()).tools}

    tools = bounded(main())
    schema = tools["approve_tool_use"].input_schema
    assert set(schema["properties"]) == {"tool_name", "input", "tool_use_id"}
    assert schema["required"] == ["tool_name", "input"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_allowed_once_at_the_jsonl_desk(mode, tmp_path):
    async def main():
        async with jsonl_desk() as desk, \
                client("--wait", "20", name="claude-code", mode=mode, cwd=str(tmp_path)) as mcp:
            call = asyncio.ensure_future(mcp.call_tool("approve_tool_use", REQUEST))
            requested = await desk.event("permission/requested")
            await desk.send({"type": "permission/decision", "rpc_id": requested["rpc_id"],
                             "decision": "allow_once"})
            ack = await desk.event("response/ack")
            resolved = await desk.event("permission/resolved")
            return requested, ack, resolved, await call

    requested, ack, resolved, result = bounded(main())
    assert requested["tool"] == "Bash"
    assert requested["arguments"] == {"command": "rm -rf build"}
    assert requested["call_id"] == "toolu_01"
    assert requested["source"]["client"] == "claude-code"
    assert ack["accepted"] is True
    assert resolved["decision"] == "allow_once"
    assert _outcome(result) == {"behavior": "allow",
                                "updatedInput": {"command": "rm -rf build"}}


def test_denied_with_a_reason_and_a_bad_decision_keeps_it_pending():
    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("approve_tool_use", REQUEST))
            requested = await desk.event("permission/requested")
            await desk.send({"type": "permission/decision", "rpc_id": requested["rpc_id"],
                             "decision": "maybe"})
            refused = await desk.event("response/ack")
            await desk.send({"type": "permission/decision", "rpc_id": "p_nope",
                             "decision": "deny"})
            unknown = await desk.event("response/ack")
            await desk.send({"type": "permission/decision", "rpc_id": requested["rpc_id"],
                             "decision": "deny", "message": "not on main"})
            return refused, unknown, await call

    refused, unknown, result = bounded(main())
    assert refused["accepted"] is False and refused["reason"] == "bad-response"
    assert unknown["accepted"] is False and unknown["reason"] == "not-pending"
    outcome = _outcome(result)
    assert outcome["behavior"] == "deny"
    assert "not on main" in outcome["message"]


def test_allow_for_the_session_is_remembered_by_the_server_process():
    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("approve_tool_use", REQUEST))
            requested = await desk.event("permission/requested")
            await desk.send({"type": "permission/decision", "rpc_id": requested["rpc_id"],
                             "decision": "allow_session"})
            first = await call
            second = await mcp.call_tool("approve_tool_use", {**REQUEST, "tool_use_id": "t2"})
            other = asyncio.ensure_future(mcp.call_tool(
                "approve_tool_use", {"tool_name": "Write", "input": {"path": "x"}}))
            asked = await desk.event("permission/requested")
            await desk.send({"type": "permission/decision", "rpc_id": asked["rpc_id"],
                             "decision": "deny"})
            return first, second, asked, await other

    first, second, asked, other = bounded(main())
    assert _outcome(first)["behavior"] == "allow"
    assert _outcome(second)["behavior"] == "allow"  # not asked again
    assert asked["tool"] == "Write"  # another tool is asked
    assert _outcome(other)["behavior"] == "deny"


def test_always_is_saved_in_the_config_directory_for_later_servers(tmp_path):
    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("approve_tool_use", REQUEST))
            requested = await desk.event("permission/requested")
            await desk.send({"type": "permission/decision", "rpc_id": requested["rpc_id"],
                             "decision": "allow_always"})
            first = await call
        async with client() as mcp:  # a new process, no desk at all
            return first, await mcp.call_tool("approve_tool_use", REQUEST)

    first, later = bounded(main())
    assert _outcome(first)["behavior"] == "allow"
    assert _outcome(later) == {"behavior": "allow",
                               "updatedInput": {"command": "rm -rf build"}}
    saved = json.loads((Path(os.environ["DSH_HOME"]) / "permissions.json").read_text())
    assert list(saved["always"]) == ["Bash"]


def test_no_desk_denies_at_once_saying_how_to_reach_a_human():
    async def main():
        async with client() as mcp:
            return await mcp.call_tool("approve_tool_use", REQUEST)

    outcome = _outcome(bounded(main(), ceiling=30))
    assert outcome["behavior"] == "deny"
    assert "run `dsh attach` in a terminal" in outcome["message"]


def test_bad_arguments_are_a_deny_naming_what_is_missing():
    async def main():
        async with client() as mcp:
            return await mcp.call_tool("approve_tool_use", {"tool_name": "Bash"})

    outcome = _outcome(bounded(main()))
    assert outcome["behavior"] == "deny"
    assert "INVALID_ARGS" in outcome["message"] and "input (an object)" in outcome["message"]


def test_the_agent_cancelling_withdraws_the_request_at_the_desk():
    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("approve_tool_use", REQUEST))
            requested = await desk.event("permission/requested")
            call.cancel()
            resolved = await desk.event("permission/resolved")
            return requested, resolved

    requested, resolved = bounded(main())
    assert resolved["rpc_id"] == requested["rpc_id"]
    assert resolved["outcome"] == "aborted"
