"""Permission decisions from outside the process: first valid response wins."""

from __future__ import annotations

import asyncio

from dsh_cli.core.events import EventStream, PermissionRequested
from dsh_cli.permissions import PermissionGate, PermissionRequest
from dsh_cli.permissions.pending import RemotePermissions


def ask_and_respond(*responses):
    events = EventStream()
    seen = []
    events.subscribe(seen.append)
    remote = RemotePermissions()
    gate = PermissionGate(events=events)
    gate.register_provider(remote)
    acks = []

    async def main():
        task = asyncio.ensure_future(gate.check(PermissionRequest(tool="mcp__a__b",
                                                                  arguments={}), "d"))
        while not seen:
            await asyncio.sleep(0.01)
        rpc_id = seen[0].rpc_id
        assert remote.requests()[0][0] == rpc_id
        for response in responses:
            acks.append(response(remote, rpc_id).to_json())
        try:
            return await task
        except Exception as error:
            return error

    return asyncio.run(main()), acks, seen


def test_a_decision_settles_and_a_second_one_is_not_pending():
    outcome, acks, seen = ask_and_respond(lambda r, i: r.respond(i, "allow_once"),
                                          lambda r, i: r.respond(i, "deny"))
    assert outcome.decision == "allow_once"
    assert [ack["accepted"] for ack in acks] == [True, False]
    assert acks[1]["reason"] == "not-pending"
    assert isinstance(seen[0], PermissionRequested)


def test_bad_decisions_are_refused_and_the_request_stays_pending():
    outcome, acks, _ = ask_and_respond(lambda r, i: r.respond(i, "yes"),
                                       lambda r, i: r.respond(i, "deny", 3),
                                       lambda r, i: r.respond(i, "deny", "x" * 3000),
                                       lambda r, i: r.respond("p_other", "deny"),
                                       lambda r, i: r.respond(i, "deny", " no "))
    assert [ack["accepted"] for ack in acks] == [False, False, False, False, True]
    assert [ack.get("reason") for ack in acks[:4]] == ["bad-response"] * 3 + ["not-pending"]
    assert outcome.code == "PERMISSION_DENIED" and outcome.message.endswith(": no")


def test_cancel_from_outside_is_ask_cancelled():
    outcome, acks, _ = ask_and_respond(lambda r, i: r.cancel(i))
    assert outcome.code == "ASK_CANCELLED" and acks[0]["accepted"] is True
