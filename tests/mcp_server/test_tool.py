"""``dsh mcp`` through the real SDK client in both protocol eras: the tool, its results."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, SharedClient, bounded, client

from dsh_cli.tools.ask_user_question import MCP_DESCRIPTION

ERAS = ["legacy", "auto"]


@pytest.fixture(scope="module")
def no_desk(tmp_path_factory):
    """``no_desk(mode)``: one ``dsh mcp`` per protocol era (its own DSH_HOME, no desk), made
    when first asked for, for the tests whose calls leave nothing the next one sees (the
    tool list, a call refused before asking, a batch with no desk). One child for them all,
    not one each (each start is about a second of CPU)."""
    home = tmp_path_factory.mktemp("no-desk-home")
    made: dict[str, SharedClient] = {}

    def shared(mode: str) -> SharedClient:
        if mode not in made:
            made[mode] = SharedClient(env={**os.environ, "DSH_HOME": str(home)}, mode=mode)
        return made[mode]

    yield shared
    for each in made.values():
        each.close()


@pytest.fixture
def refusing(no_desk):
    return no_desk("auto")


def dsh_json(*args: str):
    done = subprocess.run([DSH, *args], capture_output=True, text=True, check=True, timeout=60)
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode", ERAS)
def test_tools_list_is_the_model_facing_tool(no_desk, mode):
    mcp = no_desk(mode)
    expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
    assert mcp.protocol_version == expected
    tools = mcp.list_tools().tools
    assert [tool.name for tool in tools] == ["ask_user_question", "get_user_answer",
                                             "approve_tool_use"]
    assert tools[0].input_schema == dsh_json("schema")
    # the answer (``dsh schema --answer``), the error object an isError result carries, or
    # an async call's ticket, or an async call's outcome as its task's result
    output = tools[0].output_schema
    answer = {key: value for key, value in dsh_json("schema", "--answer").items()
              if key != "$defs"}
    assert output["$defs"]["AskUserQuestionAnswer"] == answer
    assert output["anyOf"] == [{"$ref": "#/$defs/AskUserQuestionAnswer"},
                               {"$ref": "#/$defs/ToolErrorResult"},
                               {"$ref": "#/$defs/TicketAccepted"},
                               {"$ref": "#/$defs/TaskOutcome"}]
    # the model-facing one, saying that async tickets are fetched with get_user_answer
    assert tools[0].description == MCP_DESCRIPTION


@pytest.mark.parametrize("mode", ERAS)
def test_answered_from_an_answers_file(mode, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))

    async def main():
        async with client("--answers", str(answers), mode=mode) as mcp:
            return await mcp.call_tool("ask_user_question", BATCH)

    result = bounded(main())
    assert result.is_error is False
    assert result.content[0].text == '{"answers":[{"id":"db","selected":["SQLite"]}]}'
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


@pytest.mark.parametrize(("arguments", "code"), [
    ({"questions": [{"id": "db"}]}, "INVALID_ARGS"),
    ({"questions": "not json"}, "INVALID_ARGS"),
    ({}, "INVALID_ARGS"),
    ({"questions": [{"id": "db", "question": "?", "options": ["A", "A"]}]}, "INVALID_QUESTIONS"),
    ({"questions": []}, "EMPTY_QUESTIONS"),
])
def test_invalid_arguments_are_error_results(refusing, arguments, code):
    result = refusing.call_tool("ask_user_question", arguments)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code
    assert json.loads(result.content[0].text) == result.structured_content


def test_forgiving_decoding_is_the_model_facing_tools(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["B"]}))
    arguments = {"questions": json.dumps([{"id": "db", "question": "?", "options": ["A", "B"],
                                           "multiSelect": True}])}

    async def main():
        async with client("--answers", str(answers)) as mcp:
            return await mcp.call_tool("ask_user_question", arguments)

    result = bounded(main())
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["B"]}]}


@pytest.mark.parametrize("mode", ERAS)
def test_no_desk_fails_at_once_with_no_provider(no_desk, mode):
    result = no_desk(mode).call_tool("ask_user_question", BATCH)
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "NO_PROVIDER"
    assert "run `dsh attach` in a terminal" in error["message"]


def test_each_batch_is_recorded_in_the_session_store(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))

    async def main():
        async with client("--answers", str(answers), name="recorder") as mcp:
            await mcp.call_tool("ask_user_question", BATCH)
            await mcp.call_tool("ask_user_question", {"questions": [{"id": "x", "question": "?"}]})

    bounded(main())
    sessions = dsh_json("sessions", "list", "--json")
    assert [s["model"] for s in sessions] == ["mcp:recorder"]
    shown = subprocess.run([DSH, "sessions", "show", sessions[0]["id"]], capture_output=True,
                           text=True, check=True, timeout=60).stdout
    assert "-> ask_user_question" in shown
    assert ": answered" in shown
    assert '"selected":["SQLite"]' in shown
    assert "NO_PROVIDER" in shown  # the failed batch is there too


def test_stdout_carries_only_mcp_messages(tmp_path):
    """A raw JSON-RPC exchange: every stdout line is a JSON-RPC message."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "ask_user_question", "arguments": BATCH}}
    lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call]
    process = subprocess.Popen([DSH, "mcp", "--answers", str(answers)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
        process.stdin.flush()
        messages = []
        while not any(m.get("id") == 2 for m in messages):
            line = process.stdout.readline()
            assert line, "dsh mcp ended before answering"
            messages.append(json.loads(line))  # anything but JSON would fail here
        process.stdin.close()
        process.wait(timeout=30)
    finally:
        process.kill()
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    result = next(m for m in messages if m.get("id") == 2)["result"]
    assert result["structuredContent"] == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
