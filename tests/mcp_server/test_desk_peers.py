"""Desk peers that cannot hurt ``dsh mcp``: silent, stopped, or connecting by the hundred."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

from harness.mcp_util import BATCH, ask_once_linked, bounded, client, jsonl_desk, server_socket

from dsh_cli.mcp_server.desks import TAKE_WITHIN

NO_HANG = 15.0  # a question must end well before this; today's code waited forever


async def _no_provider(mcp) -> tuple[dict, float]:
    """Ask one batch that no desk takes: its error, and how long it took."""
    start = time.monotonic()
    result = await asyncio.wait_for(mcp.call_tool("ask_user_question", BATCH), NO_HANG)
    return result.structured_content["error"], time.monotonic() - start


async def _line(reader: asyncio.StreamReader) -> dict:
    return json.loads(await asyncio.wait_for(reader.readline(), NO_HANG))


def test_a_peer_that_connects_and_says_nothing_is_no_desk():
    async def main():
        async with client() as mcp:
            reader, writer = await asyncio.open_unix_connection(str(await server_socket()))
            hello = await _line(reader)  # served: the server counts the connection now
            error, took = await _no_provider(mcp)
            # the silent peer wakes up: the batch it never took is withdrawn, and taking or
            # answering it now changes nothing
            requested, resolved = await _line(reader), await _line(reader)
            for frame in ({"type": "desk/taken", "rpc_id": requested["rpc_id"]},
                          {"type": "question/answer", "rpc_id": requested["rpc_id"],
                           "session_id": requested["session_id"],
                           "answers": [{"id": "db", "selected": ["SQLite"]}]}):
                writer.write((json.dumps(frame) + "\n").encode())
            await writer.drain()
            ack = await _line(reader)
            writer.close()
            return hello, error, took, requested, resolved, ack

    hello, error, took, requested, resolved, ack = bounded(main())
    print(f"NO_PROVIDER {took:.2f} s after the question, a silent peer attached")
    assert hello["type"] == "desk/hello"
    assert error["code"] == "NO_PROVIDER"
    assert "took the question" in error["message"]
    assert TAKE_WITHIN - 0.5 < took < NO_HANG
    assert requested["type"] == "question/requested"
    assert resolved == {"type": "question/resolved", "rpc_id": requested["rpc_id"],
                        "outcome": "aborted"}
    assert ack["type"] == "response/ack" and ack["accepted"] is False
    assert ack["reason"] == "not-pending"


def test_a_stopped_dsh_attach_is_no_desk_and_after_it_resumes_it_answers_again():
    async def main():
        async with jsonl_desk(real_start=True) as desk, client() as mcp:
            await ask_once_linked(mcp, desk)
            os.kill(desk.process.pid, signal.SIGSTOP)
            try:
                error, took = await _no_provider(mcp)
            finally:
                os.kill(desk.process.pid, signal.SIGCONT)
            stale = await desk.event("question/requested")
            withdrawn = await desk.event("question/resolved")
            await desk.answer(stale, [{"id": "db", "selected": ["SQLite"]}])
            refused = await desk.event("response/ack")
            # the resumed desk counts again, and a human may take longer than TAKE_WITHIN:
            # dsh attach took the batch the moment it read it
            again = await ask_once_linked(mcp, desk, think=TAKE_WITHIN + 1)
            return error, took, stale, withdrawn, refused, again

    error, took, stale, withdrawn, refused, again = bounded(main())
    print(f"NO_PROVIDER {took:.2f} s after the question, dsh attach stopped")
    assert error["code"] == "NO_PROVIDER"
    assert TAKE_WITHIN - 0.5 < took < NO_HANG
    assert withdrawn["rpc_id"] == stale["rpc_id"] and withdrawn["outcome"] == "aborted"
    assert refused["accepted"] is False and refused["reason"] == "not-pending"
    assert again["rpc_id"] != stale["rpc_id"]


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_closed_desk_connections_release_their_threads():
    cycles = 300

    async def connect_and_close(path) -> int:
        reader, writer = await asyncio.open_unix_connection(str(path))
        hello = await _line(reader)
        writer.close()
        await writer.wait_closed()
        return hello["pid"]

    async def main():
        async with client() as mcp:
            path = await server_socket()
            pid = None
            for _ in range(5):  # anything started once (worker threads) is started now
                pid = await connect_and_close(path)
            await asyncio.sleep(0.5)
            before = _threads(pid)
            for _ in range(cycles):
                await connect_and_close(path)
            for _ in range(100):  # the last connections' threads are ending
                after = _threads(pid)
                if after <= before:
                    break
                await asyncio.sleep(0.05)
            error, took = await _no_provider(mcp)
            return before, after, error, took

    before, after, error, took = bounded(main())
    print(f"dsh mcp threads: {before} before, {after} after {cycles} desk connections")
    assert after <= before + 1  # today's code: one more thread per connection
    # every connection was counted off again: no desk, so NO_PROVIDER at once
    assert error["code"] == "NO_PROVIDER" and "no one is at the dsh desk" in error["message"]
    assert took < TAKE_WITHIN


def test_a_silent_peer_does_not_hold_a_permission_request():
    request = {"tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "toolu_1"}

    async def main():
        async with client() as mcp:
            reader, writer = await asyncio.open_unix_connection(str(await server_socket()))
            await _line(reader)
            start = time.monotonic()
            result = await asyncio.wait_for(mcp.call_tool("approve_tool_use", request), NO_HANG)
            took = time.monotonic() - start
            writer.close()
            return json.loads(result.content[0].text), took

    outcome, took = bounded(main())
    assert outcome["behavior"] == "deny"
    assert "took the permission request" in outcome["message"]
    assert TAKE_WITHIN - 0.5 < took < NO_HANG
