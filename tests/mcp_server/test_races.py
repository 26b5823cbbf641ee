"""An answer racing the agent: one outcome, nothing lost or given twice, across real processes.

A real ``dsh mcp`` (raw JSON-RPC) and a real ``dsh attach --jsonl`` desk. Each round puts
its two events in an order the test decides (one side first, the other only once the
server has acknowledged it) or sends both at the same moment; whichever the server took
first, the desk's ack, the agent's results and the stored history agree.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess

from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, bounded, jsonl_desk
from harness.tasks_wire import Wire2025, http_dsh

ANSWER = [{"id": "db", "selected": ["SQLite"]}]
ROUNDS = 12
ORDERS = ("answer first", "agent first", "together")
_ids = itertools.count(1000)


class Wire:
    """``dsh mcp ARGS`` over pipes, every response kept by id (raced ones come late)."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([DSH, "mcp", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        self.responses: dict[int, list[dict]] = {}

    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> int:
        request_id = next(_ids)
        message: dict = {"jsonrpc": "2.0", "method": method}
        if not notify:
            message["id"] = request_id
        if params is not None:
            message["params"] = params
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return request_id

    def response(self, request_id: int) -> dict:
        """The response to ``request_id``, reading (and keeping) what comes before it."""
        assert self.process.stdout is not None
        while request_id not in self.responses:
            line = self.process.stdout.readline()
            assert line, "dsh mcp ended"
            message = json.loads(line)
            if "id" in message:
                self.responses.setdefault(message["id"], []).append(message)
        return self.responses[request_id][0]

    def call(self, name: str, arguments: dict) -> int:
        return self.send("tools/call", {"name": name, "arguments": arguments})

    def end(self) -> None:
        """Close stdin and keep every response still to come."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        for line in self.process.stdout:
            message = json.loads(line)
            if "id" in message:
                self.responses.setdefault(message["id"], []).append(message)
        assert self.process.wait(timeout=30) == 0


def opened(*args: str) -> Wire:
    wire = Wire(*args)
    wire.response(wire.send("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "race-test", "version": "1.0"}}))
    wire.send("notifications/initialized", notify=True)
    return wire


def structured(response: dict) -> dict:
    return response["result"]["structuredContent"]


def history() -> dict[str, list[dict]]:
    """Every stored batch by ``rpc_id`` (a list: one batch stored twice would show)."""
    out = subprocess.run([DSH, "history", "--json"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    found: dict[str, list[dict]] = {}
    for item in json.loads(out):
        found.setdefault(item["rpc_id"], []).append(item)
    return found


async def _seen(desk, seen: dict[str, dict], kind: str) -> dict:
    """Read desk events into ``seen`` (by type) until one of ``kind`` is there."""
    while kind not in seen:
        event = await desk.event()
        seen.setdefault(event["type"], event)
    return seen[kind]


def test_a_waiting_call_answered_as_the_client_cancels_it_has_one_outcome():
    """``notifications/cancelled`` against the desk's answer: a cancel first makes the answer
    ``not-pending`` and stores the batch aborted; an answer first stands (stored answered,
    and the only result the call can have is that answer)."""
    async def main():
        rounds = []
        async with jsonl_desk() as desk:
            wire = await asyncio.to_thread(opened, "--wait", "20")
            for number in range(ROUNDS):
                order = ORDERS[number % 3]
                call = wire.call("ask_user_question", BATCH)
                requested = await desk.event("question/requested")
                seen: dict[str, dict] = {}
                cancel = {"requestId": call, "reason": "the agent moved on"}
                if order == "agent first":  # the batch withdrawn before the answer is sent
                    wire.send("notifications/cancelled", cancel, notify=True)
                    await _seen(desk, seen, "question/resolved")
                await desk.answer(requested, ANSWER)
                if order == "answer first":
                    await _seen(desk, seen, "response/ack")
                if order != "agent first":
                    wire.send("notifications/cancelled", cancel, notify=True)
                await _seen(desk, seen, "response/ack")
                await _seen(desk, seen, "question/resolved")
                rounds.append((order, call, requested["rpc_id"], seen["response/ack"],
                               seen["question/resolved"]))
            await asyncio.to_thread(wire.end)
            return rounds, wire.responses

    rounds, responses = bounded(main(), 180)
    stored = history()
    for order, call, rpc_id, ack, resolved in rounds:
        got = responses.get(call, [])
        case = (order, ack, resolved, got, stored.get(rpc_id))
        assert len(got) <= 1 and len(stored[rpc_id]) == 1, case  # never given twice
        if ack["accepted"]:  # the desk was told its answer counts: so it does
            assert order != "agent first", case
            assert resolved["outcome"] == "answered", case
            assert stored[rpc_id][0]["status"] == "answered", case
            assert all(structured(response) == {"answers": ANSWER} for response in got), case
        else:  # the cancel came first: nothing says answered, nobody got an answer
            assert order != "answer first" and ack["reason"] == "not-pending", case
            assert resolved["outcome"] == "aborted", case
            assert stored[rpc_id][0]["status"] != "answered", case
            assert not got or "answers" not in json.dumps(got[0].get("result", {})), case
    assert {order for order, *_ in rounds} == set(ORDERS)


def test_a_ticket_answered_as_its_agent_fetches_it_or_stops_waiting_keeps_its_one_answer():
    """A fetch (``get_user_answer``) at the moment of the answer, or a waiting fetch that
    the client cancels then, never withdraws the question: the answer is accepted, and
    every fetch after it returns that one answer (a raced fetch: pending, or the answer)."""
    async def main():
        rounds = []
        async with jsonl_desk() as desk:
            wire = await asyncio.to_thread(opened, "--wait", "20")
            for number in range(ROUNDS):
                waiting = number % 2 == 1  # a fetch that waits, cancelled at the answer
                order = ORDERS[number % 3]
                asked = wire.call("ask_user_question", {**BATCH, "delivery": "async"})
                ticket = structured(await asyncio.to_thread(wire.response, asked))["ticket"]
                requested = await desk.event("question/requested")
                fetch = {"ticket": ticket, "wait_seconds": 20 if waiting else 0}
                seen: dict[str, dict] = {}
                if order == "agent first":
                    raced = wire.call("get_user_answer", fetch)
                    if not waiting:  # its pending result is back before the answer
                        await asyncio.to_thread(wire.response, raced)
                    else:
                        wire.send("notifications/cancelled", {"requestId": raced},
                                  notify=True)
                await desk.answer(requested, ANSWER)
                if order == "answer first":
                    await _seen(desk, seen, "response/ack")
                if order != "agent first":
                    raced = wire.call("get_user_answer", fetch)
                    if waiting:
                        wire.send("notifications/cancelled", {"requestId": raced},
                                  notify=True)
                await _seen(desk, seen, "response/ack")
                after = [structured(await asyncio.to_thread(
                    wire.response, wire.call("get_user_answer",
                                             {"ticket": ticket, "wait_seconds": 20})))
                         for _ in range(2)]
                rounds.append((order, waiting, raced, requested["rpc_id"],
                               seen["response/ack"], after))
            await asyncio.to_thread(wire.end)
            return rounds, wire.responses

    rounds, responses = bounded(main(), 180)
    stored = history()
    for order, waiting, raced, rpc_id, ack, after in rounds:
        got = [structured(response) for response in responses.get(raced, [])]
        case = (order, waiting, ack, got, after, stored.get(rpc_id))
        assert ack["accepted"], case  # a fetch never withdraws the question
        assert after == [{"answers": ANSWER}] * 2, case  # nothing lost, the same answer
        assert len(got) <= 1, case
        assert all(result == {"answers": ANSWER} or result.get("status") == "pending"
                   for result in got), case
        assert [item["status"] for item in stored[rpc_id]] == ["answered"], case


def test_a_ticket_answered_as_its_session_ends_is_settled_once():
    """Ending the HTTP session (which withdraws its open tickets) against the desk's
    answer: whichever came first decides the desk's ack and the stored outcome."""
    async def main():
        rounds = []
        async with jsonl_desk() as desk:
            with http_dsh("--wait", "20") as url:
                for number in range(ROUNDS):
                    order = ORDERS[number % 3]
                    session = await asyncio.to_thread(Wire2025, url)
                    asked = await asyncio.to_thread(session.request, "tools/call", {
                        "name": "ask_user_question",
                        "arguments": {**BATCH, "delivery": "async"}})
                    assert asked["result"]["structuredContent"]["ticket"]
                    requested = await desk.event("question/requested")
                    seen: dict[str, dict] = {}
                    end = asyncio.to_thread(_delete, url, session.headers())
                    if order == "agent first":
                        await end
                        await _seen(desk, seen, "question/resolved")
                    answering = asyncio.ensure_future(desk.answer(requested, ANSWER))
                    if order == "answer first":
                        await answering
                        await _seen(desk, seen, "response/ack")
                    if order != "agent first":
                        await end
                    await answering
                    await _seen(desk, seen, "response/ack")
                    await _seen(desk, seen, "question/resolved")
                    rounds.append((order, requested["rpc_id"], seen["response/ack"],
                                   seen["question/resolved"]))
        return rounds

    rounds = bounded(main(), 180)
    stored = history()
    for order, rpc_id, ack, resolved in rounds:
        case = (order, ack, resolved, stored.get(rpc_id))
        assert len(stored[rpc_id]) == 1, case
        if ack["accepted"]:
            assert order != "agent first", case
            assert resolved["outcome"] == "answered", case
            assert stored[rpc_id][0]["status"] == "answered", case
        else:
            assert order != "answer first" and ack["reason"] == "not-pending", case
            assert resolved["outcome"] == "aborted", case
            assert stored[rpc_id][0]["status"] != "answered", case


def _delete(url: str, headers: dict[str, str]) -> None:
    """End the HTTP session (``DELETE``), as a client that is done does."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        connection.request("DELETE", parts.path, headers=headers)
        assert connection.getresponse().status < 400
    finally:
        connection.close()
