"""The real Claude Code, Codex and Gemini CLI ask the human through ``dsh mcp`` and the desk.

Each test runs one agent's non-interactive form as a child process against the scripted
model of ``model_server.py``; the model calls the dsh tool, a ``dsh attach --jsonl`` child
answers (or cancels), and the model's next request shows what the agent sent back.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from agent_rig import AGENTS, BATCH, finish
from model_server import ModelServer

ANSWER = [{"id": "db", "selected": ["SQLite"]}]
# The tool's text, found inside whatever the agent wraps it in (Codex: "Wall time: … Output:",
# Gemini CLI: <untrusted_context>).
COMPACT = json.dumps({"answers": ANSWER}, separators=(",", ":"))
# What clientInfo carries, and the name people know, which the desk may show instead.
CLIENTS = {"claude": {"claude-code", "Claude Code"}, "codex": {"codex-mcp-client", "Codex"},
           "gemini": {"gemini-cli-mcp-client", "Gemini CLI"}}
PROMPT = "Ask me which database to use."
# an async call's ticket, inside whatever the agent wraps the result in (escaped or not)
TICKET = re.compile(r'ticket\\?"\s*:\s*\\?"(q_[0-9a-f]{16})')


def _ask_tool(offered: set[str]) -> str:
    """The name under which the agent offered dsh's question tool to its model."""
    names = [name for name in offered if name.endswith("ask_user_question")]
    assert len(names) == 1, f"the ask tool is not among the offered tools: {sorted(offered)}"
    return names[0]


@pytest.mark.parametrize("name", AGENTS)
def test_the_question_reaches_the_desk_and_the_answer_the_model(name, make_agent, desk):
    with ModelServer(call=("ask_user_question", BATCH)) as model:
        agent = make_agent(name, model.url)
        agent.install("--wait", "20")
        process = agent.start(PROMPT)
        requested = desk.event("question/requested", process)
        desk.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                   "session_id": requested["session_id"], "answers": ANSWER})
        status, _, err = finish(process)
    assert status == 0, err
    tool = _ask_tool(model.offered())
    assert tool.startswith("mcp") and "dsh" in tool  # the server's name, as each agent spells it
    assert any(other.endswith("approve_tool_use") for other in model.offered())
    assert requested["questions"][0]["question"] == "Which database?"
    assert requested["source"]["client"] in CLIENTS[name]
    assert os.path.realpath(requested["source"]["cwd"]) == os.path.realpath(agent.project)
    assert isinstance(requested["source"]["pid"], int)
    assert any(COMPACT in result for result in model.results()), model.results()


@pytest.mark.parametrize("name", AGENTS)
def test_cancelled_at_the_desk_the_model_reads_ask_cancelled(name, make_agent, desk):
    with ModelServer(call=("ask_user_question", BATCH)) as model:
        agent = make_agent(name, model.url)
        agent.install("--wait", "20")
        process = agent.start(PROMPT)
        requested = desk.event("question/requested", process)
        desk.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                   "session_id": requested["session_id"]})
        status, _, err = finish(process)
    assert status == 0, err
    assert any("ASK_CANCELLED" in result for result in model.results()), model.results()


@pytest.mark.parametrize("name", AGENTS)
def test_with_no_desk_the_model_reads_no_provider_at_once(name, make_agent):
    with ModelServer(call=("ask_user_question", BATCH)) as model:
        agent = make_agent(name, model.url)
        agent.install()
        status, _, err = finish(agent.start(PROMPT))
    assert status == 0, err
    answered = [turn for turn in model.turns if turn.results]
    assert answered, f"the agent never sent a tool result back: {model.turns}"
    assert any("NO_PROVIDER" in result and "dsh attach" in result
               for result in answered[0].results), answered[0].results
    asked = max(turn.at for turn in model.turns if turn.at < answered[0].at)
    # "At once": the gap between the model's call and the agent's reply holds no wait.
    assert answered[0].at - asked < 5.0


@pytest.mark.parametrize("decision", ["allow_once", "deny"])
def test_claude_code_asks_the_desk_before_writing_a_file(decision, make_agent, desk, tmp_path):
    target = tmp_path / "project" / "note.txt"  # in the agent's project folder
    with ModelServer(call=("Write", {"file_path": str(target), "content": "hello\n"})) as model:
        agent = make_agent("claude", model.url)
        agent.install("--wait", "20")
        process = agent.start("Write hello to note.txt.", "--permission-prompt-tool",
                              "mcp__dsh__approve_tool_use")
        requested = desk.event("permission/requested", process)
        desk.send({"type": "permission/decision", "rpc_id": requested["rpc_id"],
                   "session_id": requested["session_id"], "decision": decision,
                   "message": "not in this folder"})
        status, _, err = finish(process)
    assert status == 0, err
    assert requested["tool"] == "Write"
    assert requested["arguments"]["file_path"] == str(target)
    assert requested["source"]["client"] in CLIENTS["claude"]
    if decision == "allow_once":
        assert target.read_text(encoding="utf-8") == "hello\n"
    else:
        assert not target.exists()
        assert any("not in this folder" in result for result in model.results()), \
            model.results()


def test_when_claude_code_gives_up_on_the_call_the_desk_drops_the_batch(make_agent, desk):
    with ModelServer(call=("ask_user_question", BATCH)) as model:
        agent = make_agent("claude", model.url)
        # install's hour, cut to 3 s (the entry's "timeout" wins over MCP_TOOL_TIMEOUT)
        agent.install("--wait", "20", timeout=3000)
        process = agent.start(PROMPT)
        requested = desk.event("question/requested", process)
        resolved = desk.event("question/resolved", process, timeout=30)
        status, _, err = finish(process)
    assert status == 0, err
    assert resolved["rpc_id"] == requested["rpc_id"]
    assert resolved["outcome"] == "aborted"
    assert any("timed out" in result for result in model.results()), model.results()


def _fetch_the_ticket(results: list[str]) -> tuple[str, dict[str, object]] | None:
    """After the async call's result, the model fetches the answer by its ticket; then done."""
    if len(results) != 1:
        return None
    found = TICKET.search(results[0])
    assert found, f"no ticket in the async call's result: {results}"
    return "get_user_answer", {"ticket": found.group(1), "wait_seconds": 30}


@pytest.mark.parametrize("name", AGENTS)
def test_an_async_question_gives_a_ticket_and_get_user_answer_the_answer(name, make_agent, desk):
    with ModelServer(call=("ask_user_question", {**BATCH, "delivery": "async"}),
                     then=_fetch_the_ticket) as model:
        agent = make_agent(name, model.url)
        agent.install("--wait", "20")
        process = agent.start(PROMPT)
        requested = desk.event("question/requested", process)
        desk.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                   "session_id": requested["session_id"], "answers": ANSWER})
        status, _, err = finish(process)
    assert status == 0, err
    results = model.results()
    assert requested["rpc_id"] in results[0] and "accepted" in results[0], results
    assert any(other.endswith("get_user_answer") for other in model.offered())
    assert any(COMPACT in result for result in results[1:]), results
