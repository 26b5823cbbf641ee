"""The one ownership rule through the JSON-lines relay: a real `dsh run --jsonl` and
`dsh ask --jsonl` refuse every settling frame that names another session than the
entry's own (or none for an entry asked in one), settle nothing, and then take the
frame that names it (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import mcp_forms_server, mcp_notes_server
from harness.jsonl_controller import Controller
from harness.ownership_frames import foreign, refusals, settling

QUESTION = {"id": "db", "question": "Which database?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
ANSWERS = [{"id": "db", "selected": ["SQLite"]}]
# verb: (the tool the scripted model calls, what settles it: the resolved event's outcome)
CASES = {
    "answer": ("ask_user_question", ("question/resolved", "answered")),
    "cancel": ("ask_user_question", ("question/resolved", "cancelled")),
    "decline": ("mcp__forms__deploy", ("question/resolved", "declined")),
    "decision": ("mcp__notes__write_note", ("permission/resolved", "decided")),
    "permission cancel": ("mcp__notes__write_note", ("permission/resolved", "cancelled")),
}
ARGUMENTS = {"ask_user_question": {"questions": [QUESTION]},
             "mcp__forms__deploy": {"service": "api"},
             "mcp__notes__write_note": {"text": "from a controller"}}
# the one server each tool needs: every server configured is a child every run starts
SERVERS = {"ask_user_question": {}, "mcp__forms__deploy": {"forms": mcp_forms_server.entry()},
           "mcp__notes__write_note": {"notes": mcp_notes_server.entry()}}


@pytest.fixture
def controller():
    started: list[Controller] = []

    def start(*args: str) -> Controller:
        started.append(Controller(*args))
        return started[-1]

    yield start
    for each in started:
        each.kill()


def run_args(tmp_path: Path, tool: str) -> list[str]:
    """`dsh run --jsonl` whose scripted model calls ``tool`` once, with only its MCP server."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": tool, "arguments": ARGUMENTS[tool]}]}, {"content": "done"}]}))
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": SERVERS[tool]}))
    # the form's tool may run unasked, so its form is the one thing pending
    return ["run", "--jsonl", "--model", f"script:{script}", "--mcp-config", str(servers),
            "--allow", "mcp__forms__deploy", "go"]


@pytest.mark.parametrize("verb", CASES)
def test_a_frame_for_another_session_settles_nothing_in_dsh_run(verb, controller, tmp_path):
    tool, (resolved_type, outcome) = CASES[verb]
    dsh = controller(*run_args(tmp_path, tool))
    kind = "permission/requested" if resolved_type == "permission/resolved" else \
        "question/requested"
    requested = dsh.until(kind)
    assert isinstance(requested["session_id"], str)
    fields = {"answers": ANSWERS} if verb == "answer" else {}
    for frame in foreign(verb, requested, **fields):
        dsh.send(frame)
    refused = [dsh.next() for _ in range(3)]
    assert refused == refusals(requested)  # one line each, and nothing resolved between
    dsh.send(settling(verb, requested, **fields))
    assert dsh.next() == {"type": "response/ack", "rpc_id": requested["rpc_id"],
                          "accepted": True}
    resolved = dsh.until(resolved_type)
    assert (resolved["rpc_id"], resolved["outcome"]) == (requested["rpc_id"], outcome)
    if verb == "decision":
        assert resolved["decision"] == "allow_always"
    dsh.until("turn/completed")
    assert dsh.finish() == 0


def test_dsh_ask_belongs_to_no_session_and_refuses_a_cancel_naming_one(controller):
    dsh = controller("ask", "--jsonl", "-q", "Deploy?", "-o", "yes", "-o", "no")
    requested = dsh.until("question/requested")
    assert requested["session_id"] is None
    (frame,) = foreign("cancel", requested)
    dsh.send(frame)
    assert dsh.next() == refusals(requested)[0]
    dsh.send({"type": "question/cancel", "rpc_id": requested["rpc_id"]})  # null: its own
    assert dsh.next()["accepted"] is True
    assert dsh.next()["outcome"] == "cancelled"
    assert dsh.finish() == 130
