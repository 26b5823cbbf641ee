"""Permission requests through the web host: /api/respond, the feed's replay, host close."""

from __future__ import annotations

import asyncio

from harness.web_site import until

from dsh_cli.core.errors import HarnessError
from dsh_cli.core.events import PermissionRequested, PermissionResolved
from dsh_cli.interaction import PendingQuestions
from dsh_cli.permissions import Hints, PermissionGate, PermissionRequest
from dsh_cli.providers.web.feed import REPLAY_DONE, EventFeed


def asked(site):
    gate = PermissionGate(events=site.ui.events, session_id="s1")
    gate.register_provider(site.host.permissions)
    request = PermissionRequest(tool="mcp__git__git_reset", arguments={"mode": "hard"},
                                server="git", hints=Hints(destructive=True), call_id="c1")
    return asyncio.ensure_future(gate.check(request, "digest"))


def test_a_decision_posted_to_respond_reaches_the_gate_and_a_reload_no_longer_shows_it(serve):
    async def scenario(site):
        task = asked(site)
        await until(lambda: len(site.host.permissions) == 1)
        replay = await site.events()
        (requested, done) = replay
        assert requested["type"] == "permission/requested" and requested["server"] == "git"
        assert requested["hints"] == {"destructive": True}
        assert done == {"type": REPLAY_DONE, "pending": [requested["rpc_id"]]}
        rpc_id = requested["rpc_id"]
        def decision(value):
            return {"type": "permission/decision", "rpc_id": rpc_id, "session_id": "s1",
                    "decision": value}

        bad = await site.post("/api/respond", decision("sure"))
        mistyped = await site.post("/api/respond", decision(1))
        good = await site.post("/api/respond", decision("allow_once"))
        late = await site.post("/api/respond", decision("deny"))
        assert (bad.status, bad.json()["reason"]) == (200, "bad-response")
        assert (mistyped.status, mistyped.json()["code"]) == (400, "BAD_FRAME")
        assert good.json() == {"type": "response/ack", "rpc_id": rpc_id, "accepted": True}
        assert late.json()["reason"] == "not-pending"
        assert (await task).decision == "allow_once"
        assert await site.events() == [{"type": REPLAY_DONE, "pending": []}]

    serve(scenario)


def test_closing_the_host_aborts_a_pending_permission_request(serve):
    outcome = []

    async def scenario(site):
        task = asked(site)
        await until(lambda: len(site.host.permissions) == 1)
        await site.host.close()
        try:
            await task
        except HarnessError as error:
            outcome.append(error.code)

    serve(scenario)
    assert outcome == ["ASK_ABORTED"]


def test_the_feed_replays_a_request_it_saw_announced_until_it_is_resolved():
    """A browser connecting between the announcement and the provider's hold still sees it."""

    async def main():
        feed = EventFeed(PendingQuestions("s1"))
        feed.publish(PermissionRequested(rpc_id="p_1", session_id="s1", call_id=None, tool="t",
                                         server=None, arguments={}, hints={}))
        first = _drain(feed.connect())
        feed.publish(PermissionResolved("p_1", "decided", "deny"))
        return first, _drain(feed.connect())

    first, after = asyncio.run(main())
    assert [item["type"] for item in first] == ["permission/requested", REPLAY_DONE]
    assert first[-1]["pending"] == ["p_1"]
    assert after == [{"type": REPLAY_DONE, "pending": []}]


def _drain(queue):
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


def test_a_resolved_request_is_styled_by_the_server_as_a_question_that_ended_so():
    """The page styles the note as ``shown.style`` says: a denial looks dismissed."""
    from dsh_cli.providers.web.shown import PageText

    def style(outcome, decision=None):
        event = {"type": "permission/resolved", "rpc_id": "p_1", "outcome": outcome}
        return PageText().add({**event, "decision": decision})["shown"]["style"]

    assert style("decided", "deny") == "cancelled"
    assert style("decided", "allow_once") == "answered"
    assert style("aborted") == "aborted"
