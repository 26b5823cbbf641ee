"""Permission requests over the JSON-lines relay: events, frames, cancel, replay, end of input."""

from __future__ import annotations

import asyncio

from harness.relay_wire import QUESTIONS, SESSION, Wire, ask_task

from dsh_cli.core.errors import HarnessError
from dsh_cli.core.events import PermissionRequested
from dsh_cli.interaction import UserInteraction
from dsh_cli.permissions import Hints, PermissionGate, PermissionRequest
from dsh_cli.providers.relay import JsonLinesRelay


def run(scenario, *, questions_only=False):
    """``scenario(gate, ui, wire)`` with a relay whose permissions the gate asks."""
    wire = Wire()

    async def go():
        ui = UserInteraction(session_id=SESSION)
        relay = JsonLinesRelay(ui, input=wire.input, output=wire, questions_only=questions_only)
        ui.register_provider(relay.provider)
        gate = PermissionGate(events=ui.events, session_id=SESSION)
        gate.register_provider(relay.permissions)
        await relay.start()
        try:
            return await asyncio.wait_for(scenario(gate, ui, wire), 10)
        finally:
            wire.close()
            await asyncio.wait_for(relay.eof.wait(), 5)
            await relay.close()
            wire.input.close()

    return asyncio.run(go()), wire


def reset_request(call_id="call_7"):
    return PermissionRequest(tool="mcp__git__git_reset", arguments={"repo_path": "/tmp/r"},
                             server="git", hints=Hints(read_only=False, destructive=True),
                             call_id=call_id)


def check_task(gate, request=None):
    return asyncio.ensure_future(gate.check(request or reset_request(), "digest"))


async def settled(task):
    try:
        return (await task).to_json()
    except HarnessError as error:
        return error.code, error.message


def decision(rpc_id, value, **fields):
    return {"type": "permission/decision", "rpc_id": rpc_id, "session_id": SESSION,
            "decision": value, **fields}


def test_a_request_is_written_decided_acked_and_resolved():
    async def scenario(gate, ui, wire):
        task = check_task(gate)
        (requested,) = await wire.wait_for("permission/requested")
        wire.send(decision(requested["rpc_id"], "allow_session"))
        return requested, await settled(task)

    (requested, result), wire = run(scenario)
    rpc_id = requested["rpc_id"]
    assert result == {"decision": "allow_session"}
    assert requested == {"type": "permission/requested", "rpc_id": rpc_id, "session_id": SESSION,
                         "call_id": "call_7", "tool": "mcp__git__git_reset", "server": "git",
                         "arguments": {"repo_path": "/tmp/r"},
                         "hints": {"read_only": False, "destructive": True}}
    assert wire.events[1:] == [
        {"type": "response/ack", "rpc_id": rpc_id, "accepted": True},
        {"type": "permission/resolved", "rpc_id": rpc_id, "outcome": "decided",
         "decision": "allow_session"},
    ]


def test_bad_decisions_are_refused_and_the_request_stays_pending():
    async def scenario(gate, ui, wire):
        task = check_task(gate)
        (requested,) = await wire.wait_for("permission/requested")
        rpc_id = requested["rpc_id"]
        wire.send(decision(rpc_id, "yes"))
        wire.send(decision(rpc_id, "deny", message="x" * 3000))
        wire.send(decision(rpc_id, 42))
        wire.send({"type": "permission/decision", "decision": "deny"})
        wire.send(decision("p_unknown", "deny"))
        await wire.wait_for("response/ack", 3)
        await wire.wait_for("error", 2)
        assert not task.done()
        wire.send(decision(rpc_id, "deny", message="  not on main  "))
        wire.send(decision(rpc_id, "allow_once"))
        await wire.wait_for("response/ack", 5)
        return await settled(task)

    result, wire = run(scenario)
    assert result == ("PERMISSION_DENIED", "the user denied mcp__git__git_reset: not on main")
    acks = wire.of("response/ack")
    assert [ack.get("reason") for ack in acks] == [
        "bad-response", "bad-response", "not-pending", None, "not-pending"]
    assert "allow_once, allow_session, allow_always, deny" in acks[0]["message"]
    assert [error["code"] for error in wire.of("error")] == ["BAD_FRAME", "BAD_FRAME"]
    (resolved,) = wire.of("permission/resolved")
    assert resolved["decision"] == "deny" and resolved["message"] == "not on main"


def test_question_cancel_with_a_permission_rpc_id_dismisses_it():
    async def scenario(gate, ui, wire):
        task = check_task(gate)
        (requested,) = await wire.wait_for("permission/requested")
        wire.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                   "session_id": SESSION})
        return requested["rpc_id"], await settled(task)

    (rpc_id, result), wire = run(scenario)
    assert result[0] == "ASK_CANCELLED"
    assert wire.events[1:] == [
        {"type": "response/ack", "rpc_id": rpc_id, "accepted": True},
        {"type": "permission/resolved", "rpc_id": rpc_id, "outcome": "cancelled"},
    ]


def test_replay_resends_pending_questions_and_permission_requests():
    async def scenario(gate, ui, wire):
        question = ask_task(ui, questions=QUESTIONS[2:])
        (asked,) = await wire.wait_for("question/requested")
        permission = check_task(gate)
        (requested,) = await wire.wait_for("permission/requested")
        wire.send({"type": "questions/replay"})
        await wire.wait_for("permission/requested", 2)
        wire.send(decision(requested["rpc_id"], "allow_once"))
        await wire.wait_for("permission/resolved")
        wire.send({"type": "questions/replay"})  # the settled request is not re-sent
        await wire.wait_for("question/requested", 3)
        wire.send({"type": "question/cancel", "rpc_id": asked["rpc_id"], "session_id": SESSION})
        await wire.wait_for("question/resolved")
        return await settled(permission), question

    (result, question), wire = run(scenario)
    assert result == {"decision": "allow_once"}
    assert question.exception().code == "ASK_CANCELLED"
    kinds = [event["type"] for event in wire.events]
    assert kinds == ["question/requested", "permission/requested",
                     "question/requested", "permission/requested",
                     "response/ack", "permission/resolved",
                     "question/requested", "response/ack", "question/resolved"]
    assert wire.events[2] == wire.events[0] and wire.events[3] == wire.events[1]


def test_end_of_input_aborts_pending_and_later_requests():
    async def scenario(gate, ui, wire):
        task = check_task(gate)
        await wire.wait_for("permission/requested")
        wire.close()
        first = await settled(task)
        later = await settled(check_task(gate, reset_request("call_8")))
        return first, later

    (first, later), wire = run(scenario)
    assert first == ("ASK_ABORTED", "input closed") and later == first
    assert [event.get("outcome") for event in wire.of("permission/resolved")] == [
        "aborted", "aborted"]


def test_dsh_ask_relay_takes_no_permission_frames_and_writes_no_permission_events():
    async def scenario(gate, ui, wire):
        gate.events.emit(PermissionRequested(rpc_id="p_x", session_id=SESSION, call_id=None,
                                             tool="t", server=None, arguments={}, hints={}))
        wire.send(decision("p_x", "allow_once"))
        (error,) = await wire.wait_for("error")
        return error

    error, wire = run(scenario, questions_only=True)
    assert error["code"] == "BAD_FRAME" and "permission/decision" in error["message"]
    assert [event["type"] for event in wire.events] == ["error"]

