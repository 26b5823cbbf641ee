"""Permission decisions from outside the process: first valid response wins."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from dsh_cli.core.errors import UserInteractionError
from dsh_cli.core.events import EventStream, PermissionRequested
from dsh_cli.core.signal import AbortSignal
from dsh_cli.interaction import UserInteraction
from dsh_cli.permissions import PermissionGate, PermissionRequest
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.permission_policy import permission_policy
from dsh_cli.tools.registry import Tool, ToolContext


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


def test_a_decision_seals_the_requests_signal_so_an_abort_after_it_comes_second():
    signal = AbortSignal()

    async def main():
        remote = RemotePermissions()
        deciding = asyncio.ensure_future(remote.decide(
            PermissionRequest(tool="Bash", arguments={}, signal=signal), "p_1"))
        await asyncio.sleep(0)
        ack = remote.respond("p_1", "allow_once")
        return ack, signal.abort("the agent cancelled the task"), await deciding

    ack, aborted, decision = asyncio.run(main())
    assert ack.accepted and not aborted and signal.sealed and not signal.aborted
    assert decision.decision == "allow_once"


def test_an_abort_settles_the_request_at_once_so_a_decision_after_it_is_not_pending():
    signal = AbortSignal()

    async def main():
        remote = RemotePermissions()
        deciding = asyncio.ensure_future(remote.decide(
            PermissionRequest(tool="Bash", arguments={}, signal=signal), "p_1"))
        await asyncio.sleep(0)
        signal.abort("the agent cancelled the task")
        ack = remote.respond("p_1", "allow_once")  # before the waiter has run again
        try:
            await deciding
        except UserInteractionError as error:
            return ack, error

    ack, error = asyncio.run(main())
    assert not ack.accepted and ack.reason == "not-pending"
    assert error.code == "ASK_ABORTED" and "cancelled the task" in error.message


class NoArgs(BaseModel):
    pass


def test_a_decided_tool_call_can_still_be_aborted_while_its_tool_runs():
    """The request's signal is the call's child: the decision seals only the child."""
    remote, signal = RemotePermissions(), AbortSignal()
    gate = PermissionGate(events=EventStream())
    gate.register_provider(remote)
    started, aborted = asyncio.Event(), []

    class Slow(Tool):
        name = "mcp__slow__wait"
        description = "Wait until aborted."
        Args = NoArgs

        async def run(self, args, ctx):
            started.set()
            aborted.append(await ctx.signal.wait())
            return "stopped"

    async def main():
        registry = ToolRegistry([Slow()])
        registry.use(permission_policy(gate, registry.get))
        ctx = ToolContext(user_interaction=UserInteraction(), call_id="c1", signal=signal)
        running = asyncio.ensure_future(registry.execute("mcp__slow__wait", "{}", ctx))
        while not remote.requests():
            await asyncio.sleep(0)
        assert remote.respond(remote.requests()[0][0], "allow_once").accepted
        await asyncio.wait({running, asyncio.ensure_future(started.wait())},
                           return_when=asyncio.FIRST_COMPLETED)
        assert not running.done(), running.result()
        assert signal.abort("the turn was cancelled")
        return await running

    asyncio.run(asyncio.wait_for(main(), 5))
    assert aborted == ["the turn was cancelled"]


def test_a_tool_call_leaves_no_listener_on_its_signal_once_decided():
    """The request's child signal is let go when the check ends: calls add no listeners."""
    remote, signal = RemotePermissions(), AbortSignal()
    gate = PermissionGate(events=EventStream())
    gate.register_provider(remote)

    class Quick(Tool):
        name = "mcp__quick__go"
        description = "Return at once."
        Args = NoArgs

        async def run(self, args, ctx):
            return "done"

    async def decide(decision):
        while not remote.requests():
            await asyncio.sleep(0)
        remote.respond(remote.requests()[0][0], decision)

    async def main():
        registry = ToolRegistry([Quick()])
        registry.use(permission_policy(gate, registry.get))
        ctx = ToolContext(user_interaction=UserInteraction(), call_id="c1", signal=signal)
        for decision in ("allow_once", "deny", "allow_once"):
            deciding = asyncio.ensure_future(decide(decision))
            await registry.execute("mcp__quick__go", "{}", ctx)
            await deciding

    asyncio.run(asyncio.wait_for(main(), 5))
    # the call's signal may live as long as a turn: each call leaving a listener would grow it
    assert signal._callbacks == []
    assert signal.abort("the turn was cancelled")
