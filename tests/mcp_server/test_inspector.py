"""A second real client: the MCP Inspector CLI (npm) lists and calls ``dsh mcp``'s tool."""

from __future__ import annotations

import json
import subprocess

from fakes.npm_programs import npm_program
from harness.dsh_under_test import DSH
from harness.mcp_util import QUESTION


def _inspector(answers, *method: str) -> dict:
    inspector = npm_program("mcp-inspector")
    done = subprocess.run([inspector, "--cli", DSH, "mcp", "--answers", str(answers),
                           *method], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_inspector_lists_the_model_facing_tool(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text("{}")
    listed = _inspector(answers, "--method", "tools/list")
    schema = json.loads(subprocess.run([DSH, "schema"], capture_output=True, text=True,
                                       check=True, timeout=60).stdout)
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == {"ask_user_question", "get_user_answer", "approve_tool_use"}
    tool = tools["ask_user_question"]
    assert tool["inputSchema"] == schema
    assert "AskUserQuestionAnswer" in tool["outputSchema"]["$defs"]


def test_inspector_calls_the_tool_answered_from_a_file(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    called = _inspector(answers, "--method", "tools/call", "--tool-name", "ask_user_question",
                        "--tool-arg", f"questions={json.dumps([QUESTION])}")
    assert called["isError"] is False
    assert called["structuredContent"] == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    assert json.loads(called["content"][0]["text"]) == called["structuredContent"]


def test_inspector_sees_invalid_questions_as_an_error_result(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text("{}")
    called = _inspector(answers, "--method", "tools/call", "--tool-name", "ask_user_question",
                        "--tool-arg", "questions=[]")
    assert called["isError"] is True
    assert called["structuredContent"]["error"]["code"] == "EMPTY_QUESTIONS"


def test_inspector_validates_an_async_ticket_and_a_get_user_answer_error(tmp_path):
    # the TypeScript SDK checks every structuredContent against the tool's outputSchema
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    accepted = _inspector(answers, "--method", "tools/call", "--tool-name", "ask_user_question",
                          "--tool-arg", f"questions={json.dumps([QUESTION])}",
                          "--tool-arg", "delivery=async")
    assert accepted["isError"] is False
    assert accepted["structuredContent"]["accepted"] is True
    unknown = _inspector(answers, "--method", "tools/call", "--tool-name", "get_user_answer",
                         "--tool-arg", "ticket=q_0000000000000000")
    assert unknown["isError"] is True
    assert unknown["structuredContent"]["error"]["code"] == "UNKNOWN_TICKET"
