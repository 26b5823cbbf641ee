"""The last answer belongs to its asker: the same agent, in the same directory, asking the
same header, question and options. Real ``dsh mcp`` processes over stdio (the first answered
from an answers file in raw JSON-RPC), a real ``dsh attach --jsonl`` desk seeing the rest."""

from __future__ import annotations

import asyncio
import json

from harness.mcp_util import bounded, client, jsonl_desk
from harness.tasks_wire import StdioDsh

PROCEED = {"id": "go", "header": "Deploy", "question": "Proceed?",
           "options": [{"label": "Yes"}, {"label": "No"}]}


def answer_from_a_file(tmp_path, cwd, name: str) -> dict:
    """Agent ``name`` in ``cwd`` asks PROCEED; an answers file says Yes (raw JSON-RPC)."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"go": ["Yes"]}))
    dsh = StdioDsh("--answers", str(answers), cwd=str(cwd))
    try:
        dsh.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": name, "version": "1.0"}})
        dsh.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = dsh.request("tools/call", {"name": "ask_user_question",
                                           "arguments": {"questions": [PROCEED]}})
    finally:
        dsh.close()
    return reply["result"]["structuredContent"]


async def shown_at_the_desk(desk, name: str, cwd, questions: list[dict]) -> list[dict]:
    """What the desk gets when agent ``name`` in ``cwd`` asks each of ``questions`` in turn,
    each answered before the next (one dsh mcp, its own session)."""
    async with client("--wait", "20", name=name, cwd=str(cwd)) as mcp:
        shown = []
        for question in questions:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question",
                                                       {"questions": [question]}))
            requested = await desk.event("question/requested")
            await desk.answer(requested, [{"id": question["id"], "selected": ["No"]}])
            await call
            shown.append(requested)
        return shown


def test_the_last_answer_is_offered_only_to_the_same_agent_in_the_same_directory(tmp_path):
    repo_a, repo_b = tmp_path / "a", tmp_path / "b"
    repo_a.mkdir()
    repo_b.mkdir()
    assert answer_from_a_file(tmp_path, repo_a, "agent-a") == {
        "answers": [{"id": "go", "selected": ["Yes"]}]}

    async def main():  # one desk sees the three later servers, one after another
        async with jsonl_desk() as desk:
            [other_agent] = await shown_at_the_desk(desk, "agent-b", repo_b, [PROCEED])
            [other_directory] = await shown_at_the_desk(desk, "agent-a", repo_b, [PROCEED])
            other_header, again = await shown_at_the_desk(
                desk, "agent-a", repo_a, [{**PROCEED, "header": "Drop DB"}, PROCEED])
            return other_agent, other_directory, other_header, again

    other_agent, other_directory, other_header, again = bounded(main())
    # agent B's look-alike question: A's "Yes" is not its last answer (before: it was)
    assert "last_answers" not in other_agent
    # the same agent in another directory, or another header: not the same question
    assert "last_answers" not in other_directory
    assert "last_answers" not in other_header
    # the same agent, directory and question: its own last answer, shown, never sent
    assert again["last_answers"] == {"go": ["Yes"]}
    where = again["last_answered"]["go"]  # and where it came from: A's first session
    assert where["session_id"] != again["session_id"] and where["answered_at"]
