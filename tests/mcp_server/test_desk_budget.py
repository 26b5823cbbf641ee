"""What a real ``dsh attach --jsonl`` holds is bounded by bytes (``DESK_HELD_BYTES``), all
sessions together: a batch past it is not shown, and its agent reads the desk's words as
``TOO_MANY_PENDING``; a batch answered makes room again. Raw JSON-RPC over HTTP to a real
``dsh mcp --http``, three sessions, batches of 3.4 MB (every field within its cap)."""

from __future__ import annotations

import asyncio
import json
import subprocess

from harness.batches import heavy_batch
from harness.dsh_under_test import DSH
from harness.mcp_http import http_mcp
from harness.mcp_util import bounded
from harness.tasks_wire import Wire2025

from dsh_cli.core.errors import TOO_MANY_PENDING
from dsh_cli.core.limits import DESK_HELD_BYTES, PENDING_BYTES_PER_SESSION

LINE_LIMIT = 16 * 1024 * 1024


SEEN: list[tuple[str, str | None]] = []  # every event the desk wrote: (type, rpc_id)


async def events(process: asyncio.subprocess.Process, kind: str, rpc_id: str | None = None):
    """The desk's next event of ``kind`` (for ``rpc_id``, if given)."""
    assert process.stdout is not None
    while True:
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        assert line, "the desk ended"
        event = json.loads(line)
        SEEN.append((event["type"], event.get("rpc_id")))
        if event["type"] == kind and rpc_id in (None, event.get("rpc_id")):
            return event


def call(session: Wire2025, arguments: dict) -> dict:
    return session.request("tools/call", {"name": "ask_user_question", "arguments": arguments},
                           timeout=60)["result"]["structuredContent"]


def test_a_desk_holds_at_most_its_bytes_and_the_agent_past_it_is_told_why():
    batch = heavy_batch()
    size = len(json.dumps(batch, separators=(",", ":")).encode())
    per_session = PENDING_BYTES_PER_SESSION // size
    held = DESK_HELD_BYTES // (size + 1000)  # a line carries the batch and a little more

    async def main():
        desk = await asyncio.create_subprocess_exec(
            DSH, "attach", "--jsonl", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            limit=LINE_LIMIT)
        try:
            async with http_mcp("--wait", "20") as url:
                sessions = [Wire2025(url) for _ in range(-(-(held + 1) // per_session))]
                shown = []
                for n in range(held):
                    session = sessions[n // per_session]
                    ticket = (await asyncio.to_thread(call, session, batch))["ticket"]
                    shown.append(await events(desk, "question/requested"))
                    assert shown[-1]["rpc_id"] == ticket
                last = sessions[held // per_session]
                over = (await asyncio.to_thread(call, last, batch))["ticket"]
                refused = await asyncio.to_thread(
                    last.request, "tools/call", {"name": "get_user_answer",
                                                 "arguments": {"ticket": over,
                                                               "wait_seconds": 30}}, 60)
                first = shown[0]
                assert desk.stdin is not None
                desk.stdin.write((json.dumps({  # the human dismisses one: room again
                    "type": "question/cancel", "rpc_id": first["rpc_id"],
                    "session_id": first["session_id"]}) + "\n").encode())
                await desk.stdin.drain()
                await events(desk, "question/resolved", first["rpc_id"])
                again = (await asyncio.to_thread(call, last, batch))["ticket"]
                room = await events(desk, "question/requested")
                return refused["result"]["structuredContent"], again, room, over
        finally:
            desk.kill()
            await desk.wait()

    refused, again, room, over = bounded(main(), 240)
    assert refused["error"]["code"] == TOO_MANY_PENDING, refused
    assert refused["error"]["message"].startswith("the dsh desk holds ")
    assert "(at most 64.0 MiB), so it did not take this one of 3.3 MiB" in \
        refused["error"]["message"]
    assert room["rpc_id"] == again
    assert not [seen for seen in SEEN if seen[1] == over]  # never shown, nothing withdrawn
