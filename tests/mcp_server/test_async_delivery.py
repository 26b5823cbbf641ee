"""``dsh mcp``'s ``delivery: "async"``: a ticket at once, the outcome by ``get_user_answer``.

Through ``mcp.Client`` over stdio and ``--http``, a desk (``dsh attach --jsonl``) or an
answers file answering.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
from urllib.parse import urlsplit

import pytest
from harness.mcp_http import fetch
from harness.mcp_util import BATCH, SharedClient, bounded, client, jsonl_desk
from harness.tasks_wire import http_dsh

ASYNC = {**BATCH, "delivery": "async"}
ANSWER = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
ERAS = ["legacy", "auto"]


@pytest.fixture(scope="module")
def one_server(tmp_path_factory):
    """One ``dsh mcp --wait 20`` (its own DSH_HOME) for its tool list, the calls it refuses
    before asking, and the tests whose tickets are settled at a desk of their own
    (``jsonl_desk(env=one_server.env)``) before they end, so a desk that attaches later finds
    nothing pending. One child, not one per test (each start is about a second of CPU)."""
    home = tmp_path_factory.mktemp("one-server-home")
    shared = SharedClient("--wait", "20", env={**os.environ, "DSH_HOME": str(home)})
    yield shared
    shared.close()


@pytest.fixture(scope="module")
def over_http(tmp_path_factory):
    """One ``dsh mcp --http --wait 20`` (its own DSH_HOME): its URL and environment, for the
    HTTP tests, each on sessions of its own whose tickets are all settled at a desk of its
    own before it ends (a desk that attaches later finds nothing pending)."""
    env = {**os.environ, "DSH_HOME": str(tmp_path_factory.mktemp("over-http-home"))}
    with http_dsh("--wait", "20", env=env) as url:
        yield url, env


async def ask_async(mcp) -> str:
    result = await mcp.call_tool("ask_user_question", ASYNC)
    assert result.is_error is False, result.structured_content
    assert result.structured_content["accepted"] is True
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content["ticket"]


def test_the_tools_offer_the_ticket_and_its_fetch_with_the_cap_stated(one_server):
    tools = {tool.name: tool for tool in one_server.list_tools().tools}
    ask, fetch_tool = tools["ask_user_question"], tools["get_user_answer"]
    assert ask.input_schema["properties"]["delivery"]["enum"] == ["wait", "async"]
    assert "get_user_answer" in (ask.description or "")
    assert "waits for the answer exactly like 'wait'" not in (ask.description or "")
    assert fetch_tool.input_schema["required"] == ["ticket"]
    assert "at most 55 seconds" in (fetch_tool.description or "")
    titles = {definition.get("title") for definition in fetch_tool.output_schema["$defs"].values()}
    assert {"PendingAnswer", "TicketAccepted", "ToolErrorResult"} <= titles


@pytest.mark.parametrize("mode", ERAS)
def test_a_ticket_at_once_pending_at_the_desk_then_the_answer(mode, one_server):
    async def asked(mcp, desk):
        ticket = await ask_async(mcp)  # returns while the desk has not answered
        requested = await desk.event("question/requested")
        pending = await fetch(mcp, ticket)
        for _ in range(200):  # the desk's take reaches the server after its line reaches us
            if "note" not in pending.structured_content:
                break
            await asyncio.sleep(0.05)
            pending = await fetch(mcp, ticket)
        waiting = asyncio.ensure_future(fetch(mcp, ticket, wait=30))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # it waits for the human
        await desk.answer(requested, ANSWER["answers"])
        answered = await waiting
        again = await fetch(mcp, ticket)  # kept after the first fetch
        return ticket, requested, pending, answered, again

    async def main():
        if mode == "auto":  # the module's server speaks it: one child fewer
            async with jsonl_desk(env=one_server.env) as desk:
                return await asked(one_server.here, desk)
        async with jsonl_desk() as desk, client("--wait", "20", mode=mode) as mcp:
            return await asked(mcp, desk)

    ticket, requested, pending, answered, again = bounded(main())
    assert requested["rpc_id"] == ticket
    assert requested["delivery"] == "async"  # the desk tags it: no call waits for it
    assert pending.is_error is False
    assert pending.structured_content == {"status": "pending", "ticket": ticket,
                                          "waited_seconds": 0}
    assert answered.is_error is False and answered.structured_content == ANSWER
    assert again.structured_content == ANSWER


def test_cancelled_at_the_desk_is_ask_cancelled_through_get_user_answer(one_server):
    async def main():
        mcp = one_server.here
        async with jsonl_desk(env=one_server.env) as desk:
            ticket = await ask_async(mcp)
            requested = await desk.event("question/requested")
            await desk.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                             "session_id": requested["session_id"]})
            await desk.event("question/resolved")
            return await fetch(mcp, ticket, wait=30)

    result = bounded(main())
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == "ASK_CANCELLED"


def test_a_question_timeout_is_ask_timeout_through_get_user_answer():
    async def main():
        async with jsonl_desk() as desk, \
                client("--wait", "20", "--question-timeout", "1") as mcp:
            ticket = await ask_async(mcp)
            await desk.event("question/requested")
            return await fetch(mcp, ticket, wait=30)

    result = bounded(main())
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == "ASK_TIMEOUT"


def test_answered_from_the_answers_file_and_a_huge_wait_is_clamped_not_refused(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))

    async def main():
        async with client("--answers", str(answers)) as mcp:
            ticket = await ask_async(mcp)
            return await fetch(mcp, ticket, wait=10**9)

    result = bounded(main())
    assert result.is_error is False and result.structured_content == ANSWER


def test_asked_with_no_desk_an_async_batch_waits_for_the_first_desk_a_waiting_one_fails():
    async def main():
        async with client() as mcp:
            waiting = await mcp.call_tool("ask_user_question", BATCH)
            ticket = await ask_async(mcp)  # nobody at the desk: still a ticket
            unseen = await fetch(mcp, ticket)
            async with jsonl_desk() as desk:  # the first desk attaches: it is in the inbox
                requested = await desk.event("question/requested")
                while (await fetch(mcp, ticket)).structured_content.get("note"):
                    await asyncio.sleep(0.05)  # the desk has taken it: no note any more
                await desk.answer(requested, ANSWER["answers"])
                answered = await fetch(mcp, ticket, wait=30)
            return waiting, ticket, unseen, requested, answered

    waiting, ticket, unseen, requested, answered = bounded(main())
    assert waiting.is_error is True
    assert waiting.structured_content["error"]["code"] == "NO_PROVIDER"
    assert unseen.structured_content == {
        "status": "pending", "ticket": ticket, "waited_seconds": 0,
        "note": "no desk has seen it yet: it waits for the human to run `dsh attach`"}
    assert requested["rpc_id"] == ticket and requested["delivery"] == "async"
    assert answered.structured_content == ANSWER


def test_a_bad_batch_fails_at_once_with_no_ticket(one_server):
    # no desk: a good async batch would still get a ticket (it waits for the first desk)
    result = one_server.call_tool("ask_user_question", {"questions": [], "delivery": "async"})
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == "EMPTY_QUESTIONS"


@pytest.mark.parametrize(("arguments", "code"), [
    ({"ticket": "q_0000000000000000"}, "UNKNOWN_TICKET"),
    ({"ticket": 5}, "INVALID_ARGS"),
    ({"ticket": ""}, "INVALID_ARGS"),
    ({"ticket": "q_" + "0" * 500}, "INVALID_ARGS"),
    ({}, "INVALID_ARGS"),
    ({"ticket": "q_0000000000000000", "wait_seconds": -1}, "INVALID_ARGS"),
    ({"ticket": "q_0000000000000000", "wait_seconds": "soon"}, "INVALID_ARGS"),
    ({"ticket": "q_0000000000000000", "wait_seconds": True}, "INVALID_ARGS"),
], ids=["unknown", "number", "empty", "too-long", "missing", "negative-wait", "word-wait",
        "bool-wait"])
def test_an_unknown_or_malformed_ticket_is_a_clear_error(one_server, arguments, code):
    result = one_server.call_tool("get_user_answer", arguments)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code


def test_cancelling_the_wait_leaves_the_question_pending(one_server):
    async def main():
        mcp = one_server.here
        async with jsonl_desk(env=one_server.env) as desk:
            ticket = await ask_async(mcp)
            requested = await desk.event("question/requested")
            waiting = asyncio.ensure_future(fetch(mcp, ticket, wait=30))
            await asyncio.sleep(0.2)
            waiting.cancel()  # the SDK sends notifications/cancelled
            with pytest.raises(asyncio.CancelledError):
                await waiting
            await desk.answer(requested, ANSWER["answers"])
            ack = await desk.event("response/ack")
            return ack, await fetch(mcp, ticket, wait=30)

    ack, result = bounded(main())
    assert ack["accepted"] is True  # still pending when the desk answered
    assert result.structured_content == ANSWER


def test_a_client_that_goes_away_aborts_its_async_batch_at_the_desk():
    async def main():
        async with jsonl_desk() as desk:
            async with client("--wait", "20") as mcp:
                ticket = await ask_async(mcp)
                await desk.event("question/requested")
            return ticket, await desk.event("question/resolved")

    ticket, resolved = bounded(main())
    assert resolved["rpc_id"] == ticket
    assert resolved["outcome"] == "aborted"


def test_over_http_a_ticket_is_its_sessions_only(over_http):
    from mcp import Client

    async def main():
        url, env = over_http
        async with jsonl_desk(env=env) as desk:
            async with Client(url, mode="legacy") as asker, \
                    Client(url, mode="legacy") as other:
                ticket = await ask_async(asker)
                requested = await desk.event("question/requested")
                refused = await fetch(other, ticket)
                pending = await fetch(asker, ticket)
                await desk.answer(requested, ANSWER["answers"])
                answered = await fetch(asker, ticket, wait=30)
                still_refused = await fetch(other, ticket)
            return refused, pending, answered, still_refused

    refused, pending, answered, still_refused = bounded(main())
    assert refused.is_error is True
    assert refused.structured_content["error"]["code"] == "UNKNOWN_TICKET"
    assert pending.structured_content["status"] == "pending"
    assert answered.structured_content == ANSWER
    assert still_refused.structured_content["error"]["code"] == "UNKNOWN_TICKET"


def test_over_http_a_session_that_ends_aborts_its_open_batch(over_http):
    from mcp import Client

    async def main():
        url, env = over_http
        async with jsonl_desk(env=env) as desk:
            async with Client(url, mode="legacy") as asker:
                ticket = await ask_async(asker)
                await desk.event("question/requested")
            # leaving the block ended the session (a DELETE)
            return ticket, await desk.event("question/resolved")

    ticket, resolved = bounded(main())
    assert resolved["rpc_id"] == ticket
    assert resolved["outcome"] == "aborted"


def test_over_http_the_sessionless_era_answers_by_ticket(over_http):
    from mcp import Client

    async def main():
        url, env = over_http
        async with jsonl_desk(env=env) as desk, \
                Client(url, mode="auto") as asker:
            assert asker.protocol_version == "2026-07-28"
            ticket = await ask_async(asker)
            requested = await desk.event("question/requested")
            await desk.answer(requested, ANSWER["answers"])
            return await fetch(asker, ticket, wait=30)

    assert bounded(main()).structured_content == ANSWER


def _post(url: str, message: dict, session: str | None = None) -> tuple[str | None, dict]:
    """One JSON-RPC message on a TCP connection of its own: the session id, the reply."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=40)
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    connection.request("POST", parts.path, body=json.dumps(message).encode(), headers=headers)
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    assert response.status in (200, 202), (response.status, body)
    replies = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
    if not replies and body.strip():
        replies = [json.loads(body)]
    reply = next((r for r in replies if "id" in r and ("result" in r or "error" in r)), {})
    return response.getheader("mcp-session-id"), reply


def _call(name: str, arguments: dict, number: int) -> dict:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def test_over_http_the_outcome_outlives_the_connections_of_its_session(over_http):
    """Every request on a new TCP connection, as a client that reconnects sends them: the
    session id, not the connection, keeps the ticket."""
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "reconnecting", "version": "1"}}}

    async def main():
        url, env = over_http
        async with jsonl_desk(env=env) as desk:
            session, _ = await asyncio.to_thread(_post, url, initialize)
            await asyncio.to_thread(_post, url, {"jsonrpc": "2.0",
                                                 "method": "notifications/initialized"},
                                    session)
            _, accepted = await asyncio.to_thread(
                _post, url, _call("ask_user_question", ASYNC, 2), session)
            ticket = accepted["result"]["structuredContent"]["ticket"]
            requested = await desk.event("question/requested")
            await desk.answer(requested, ANSWER["answers"])
            await desk.event("question/resolved")
            _, answered = await asyncio.to_thread(
                _post, url, _call("get_user_answer", {"ticket": ticket}, 3), session)
            return answered["result"]

    result = bounded(main())
    assert result["isError"] is False
    assert result["structuredContent"] == ANSWER
