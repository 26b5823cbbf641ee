"""Many batches pending at once on one ``dsh mcp``: the desk lists them all, any order.

The desk relay is a ``concurrent`` provider, so no batch waits behind another: every async
batch of one session and a waiting call of another are at the desk together, and the
waiting one can be answered first. Tickets are capped per session as well as in all.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from harness.mcp_http import fetch, http_mcp
from harness.mcp_util import bounded, jsonl_desk

from dsh_cli.core.errors import NO_TICKET_OWNER, TOO_MANY_PENDING
from dsh_cli.interaction import AskUserQuestionAnswer, UserInteraction
from dsh_cli.mcp_server.owned import SESSIONLESS_OWNER, request_owner
from dsh_cli.mcp_server.owned.work import LaterWork
from dsh_cli.mcp_server.server import session_owner
from dsh_cli.mcp_server.service import AskService
from dsh_cli.mcp_server.tasks import TaskLayer
from dsh_cli.mcp_server.tickets import Tickets


def batch(header: str, delivery: str) -> dict:
    return {"delivery": delivery,
            "questions": [{"id": "q1", "header": header, "question": "Which?",
                           "options": [{"label": "A"}, {"label": "B"}]}]}


def answer(label: str) -> list[dict]:
    return [{"id": "q1", "selected": [label]}]


def test_every_batch_of_every_session_is_at_the_desk_at_once_and_any_may_go_first():
    from mcp import Client

    async def main():
        async with jsonl_desk() as desk, http_mcp("--wait", "20") as url, \
                Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
            tickets = []
            for i in range(3):
                result = await a.call_tool("ask_user_question", batch(f"async{i}", "async"))
                tickets.append(result.structured_content["ticket"])
            waiting = asyncio.ensure_future(b.call_tool("ask_user_question",
                                                        batch("WAITING", "wait")))
            seen, listed = {}, {}
            while len(seen) < 4 or len(listed) < 4:  # all four, before anything is answered
                event = await desk.event()
                if event["type"] == "question/requested":
                    seen[event["questions"][0]["header"]] = event
                elif event["type"] == "inbox/changed" and event["change"] == "added":
                    listed[event["entry"]["rpc_id"]] = event["entry"]["delivery"]
            await desk.answer(seen["WAITING"], answer("B"))
            b_result = await asyncio.wait_for(waiting, 20)
            a_pending = [await fetch(a, ticket) for ticket in tickets]
            for i in (2, 0, 1):
                await desk.answer(seen[f"async{i}"], answer("A"))
            a_results = [await fetch(a, ticket, wait=20) for ticket in tickets]
            return seen, listed, tickets, b_result, a_pending, a_results

    seen, listed, tickets, b_result, a_pending, a_results = bounded(main())
    assert sorted(seen) == ["WAITING", "async0", "async1", "async2"]
    assert [seen[f"async{i}"]["rpc_id"] for i in range(3)] == tickets
    assert [seen[f"async{i}"]["delivery"] for i in range(3)] == ["async"] * 3
    assert seen["WAITING"].get("delivery", "wait") == "wait"
    # the inbox's entries (the " · async" tag, the web list's delivery) say the same
    assert listed == {**{ticket: "async" for ticket in tickets},
                      seen["WAITING"]["rpc_id"]: "wait"}
    assert b_result.is_error is False
    assert b_result.structured_content == {"answers": [{"id": "q1", "selected": ["B"]}]}
    assert [r.structured_content["status"] for r in a_pending] == ["pending"] * 3
    assert [r.structured_content for r in a_results] == \
        [{"answers": [{"id": "q1", "selected": ["A"]}]}] * 3


class Hangs:
    """A provider that lists batches and never answers (a desk nobody looks at)."""

    concurrent = True

    async def ask(self, context) -> AskUserQuestionAnswer:
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")


async def ask(service: AskService, owner: str | None, delivery: str = "async"):
    from dsh_cli.core.signal import AbortSignal

    return await service.ask(batch("cap", delivery), client="test", signal=AbortSignal(),
                             owner=owner)


def code_of(result) -> str | None:
    import json

    data = json.loads(result.content)
    return data["error"]["code"] if result.is_error else None


def test_one_session_at_its_cap_leaves_the_others_room():
    async def main():
        ui = UserInteraction()
        ui.register_provider(Hangs())
        service = AskService(ui, tickets=Tickets(owner_limit=2, open_limit=3))
        first = [code_of(await ask(service, "http:a")) for _ in range(3)]
        other = code_of(await ask(service, "http:b"))
        total = code_of(await ask(service, "http:c"))  # three open in all: the process bound
        await service.tickets.close()
        return first, other, total

    first, other, total = bounded(main())
    assert first == [None, None, TOO_MANY_PENDING]
    assert other is None
    assert total == TOO_MANY_PENDING


def test_a_call_whose_session_is_unknown_gets_no_ticket_but_may_wait():
    async def main():
        ui = UserInteraction()
        answered = AskUserQuestionAnswer.model_validate({"answers": answer("A")})

        class Answers:
            concurrent = True

            async def ask(self, context):
                return answered

        ui.register_provider(Answers())
        service = AskService(ui)
        refused = await ask(service, None)
        waited = await ask(service, None, delivery="wait")
        return code_of(refused), len(service.tickets), waited

    refused, tickets, waited = bounded(main())
    assert refused == NO_TICKET_OWNER and tickets == 0
    assert waited.is_error is False


def context(request, protocol_version: str = "2025-11-25"):
    """The parts of the SDK's ``ServerRequestContext`` that ``session_owner`` reads."""
    return SimpleNamespace(request=request, protocol_version=protocol_version,
                           session=SimpleNamespace())


@pytest.mark.parametrize(("request_", "era", "owner"), [
    (None, "2025-11-25", "stdio"),
    (SimpleNamespace(headers={"mcp-session-id": "abc"}), "2025-11-25", "http:abc"),
    (SimpleNamespace(headers={}), "2026-07-28", SESSIONLESS_OWNER),
    (SimpleNamespace(headers={"mcp-session-id": "abc"}), "2026-07-28", SESSIONLESS_OWNER),
    (SimpleNamespace(headers={}), "2025-11-25", None),
    (SimpleNamespace(), "2025-11-25", None),  # a request with no headers at all
], ids=["stdio", "header", "sessionless", "sessionless-with-header", "no-header",
        "no-headers"])
def test_the_owner_is_the_public_session_header_and_fails_closed(request_, era, owner):
    ctx = context(request_, era)
    assert session_owner(ctx, LaterWork()) == owner  # type: ignore[arg-type]
    assert request_owner(ctx) == owner  # type: ignore[arg-type]
    if era == "2025-11-25":  # a task's owner (the layer's own rule too) is a ticket's
        layer = TaskLayer(lambda *args, **kwargs: None)
        assert layer.owner_of(ctx) == owner  # type: ignore[arg-type]
