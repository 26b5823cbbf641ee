"""Whose work is whose on ``dsh mcp --http``, through the real process: one client's work
never erases, withdraws or reads another's.

A session's kept outcomes are its own (another session's churn forgets none of them); the
sessionless 2026-07-28 wire refuses new tasks past its cap instead of forgetting a kept
one; a session holding work is never closed to make room (a new one is refused); and a
2026 request's ``Mcp-Session-Id`` decides nothing.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from harness.mcp_util import BATCH, bounded, jsonl_desk
from harness.tasks_wire import ACCEPT, Wire2025, Wire2026, ask_call, http_dsh

from dsh_cli.core.limits import HTTP_SESSIONS, TASKS_PER_SESSION, TICKETS_SETTLED

ASYNC = {**BATCH, "delivery": "async"}
ANSWER = [{"id": "db", "selected": ["SQLite"]}]
ANSWERED = {"answers": ANSWER}


def asked(wire: Wire2025 | Wire2026, **headers: str) -> str:
    """The ticket of an async ``ask_user_question``."""
    params = {"name": "ask_user_question", "arguments": ASYNC}
    reply = wire.request("tools/call", params, headers=headers) if headers else \
        wire.request("tools/call", params)
    return reply["result"]["structuredContent"]["ticket"]


def fetched(wire: Wire2025 | Wire2026, ticket: str, **headers: str) -> dict:
    """``get_user_answer``'s structured result for ``ticket``."""
    params = {"name": "get_user_answer", "arguments": {"ticket": ticket}}
    reply = wire.request("tools/call", params, headers=headers) if headers else \
        wire.request("tools/call", params)
    return reply["result"]["structuredContent"]


def _delete(url: str, session: Wire2025) -> None:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    connection.request("DELETE", parts.path, headers=session.headers())
    assert connection.getresponse().status < 400
    connection.close()


def _opening(url: str) -> int:
    """The status of an ``initialize`` that would open one more session."""
    import http.client
    import json
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    connection.request("POST", parts.path, json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "one-too-many", "version": "1.0"}}}), ACCEPT)
    status = connection.getresponse().status
    connection.close()
    return status


def test_another_sessions_thousand_tickets_leave_an_answered_one_unfetched_kept():
    async def main():
        async with jsonl_desk() as desk:
            with http_dsh("--wait", "30") as url:
                mine = await asyncio.to_thread(Wire2025, url)
                ticket = await asyncio.to_thread(asked, mine)
                await desk.answer(await desk.event("question/requested"), ANSWER)
                await desk.event("question/resolved")
                await desk.close()  # the other session's flood waits for no desk
                theirs = await asyncio.to_thread(Wire2025, url)
                with ThreadPoolExecutor(4) as pool:
                    list(pool.map(lambda _: asked(theirs), range(TICKETS_SETTLED)))
                await asyncio.to_thread(_delete, url, theirs)  # all of them end at once
                return await asyncio.to_thread(fetched, mine, ticket)

    assert bounded(main(), 240) == ANSWERED


def test_on_the_sessionless_wire_one_clients_tasks_leave_anothers_kept_and_its_calls_served():
    async def main():
        async with jsonl_desk() as desk:
            with http_dsh("--wait", "30") as url:
                mine, theirs = Wire2026(url), Wire2026(url)
                created = (await asyncio.to_thread(mine.request, "tools/call",
                                                   ask_call()))["result"]
                await desk.answer(await desk.event("question/requested"), ANSWER)
                await desk.event("question/resolved")
                for _ in range(TASKS_PER_SESSION):  # waiting: no answer is given
                    made = await asyncio.to_thread(theirs.request, "tools/call", ask_call())
                    assert made["result"]["resultType"] == "task", made
                kept = await asyncio.to_thread(mine.request, "tasks/get",
                                               {"taskId": created["taskId"]})
                again = await asyncio.to_thread(mine.request, "tools/call", ask_call())
                return kept, again

    kept, again = bounded(main(), 120)
    assert kept["result"]["status"] == "completed", kept
    assert kept["result"]["result"]["structuredContent"]["answers"] == ANSWER  # told as the human's
    assert again["result"]["resultType"] == "task", again


def test_with_every_session_holding_work_a_new_one_is_refused_and_none_is_withdrawn():
    with http_dsh("--wait", "60") as url:  # no desk: every question waits
        first = Wire2025(url)
        ticket = asked(first)
        task = first.request("tools/call", ask_call({"ttl": 600_000}))["result"]["task"]

        def holding(_: int) -> None:
            asked(Wire2025(url))

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(holding, range(HTTP_SESSIONS - 1)))
        status = _opening(url)
        pending = fetched(first, ticket)
        working = first.request("tasks/get", {"taskId": task["taskId"]})["result"]
    assert status == 503
    assert pending["status"] == "pending"
    assert working["status"] == "working"


def test_a_2026_request_naming_a_session_neither_reads_its_tickets_nor_makes_it_any():
    async def main():
        async with jsonl_desk() as desk:
            with http_dsh("--wait", "30") as url:
                session = await asyncio.to_thread(Wire2025, url)
                ticket = await asyncio.to_thread(asked, session)
                await desk.answer(await desk.event("question/requested"), ANSWER)
                await desk.event("question/resolved")
                wire = Wire2026(url, tasks=False)
                named = {"Mcp-Session-Id": session.session}
                stolen = await asyncio.to_thread(fetched, wire, ticket, **named)
                invented = await asyncio.to_thread(asked, wire,
                                                   **{"Mcp-Session-Id": "invented"})
                await desk.answer(await desk.event("question/requested"), ANSWER)
                await desk.event("question/resolved")
                by_ticket = await asyncio.to_thread(fetched, wire, invented)  # no header
                own = await asyncio.to_thread(fetched, session, ticket)
                return stolen, by_ticket, own

    stolen, by_ticket, own = bounded(main(), 120)
    assert stolen["error"]["code"] == "UNKNOWN_TICKET", stolen
    assert by_ticket == ANSWERED  # the sessionless wire's: its ticket is its key
    assert own == ANSWERED
