"""``desk/opened`` and ``desk/released`` at a real ``dsh mcp``, from raw desk sockets.

Two raw peers: one opens the batch, the other hears ``desk/opened``; a bad frame is one
``BAD_FRAME`` error and a hold of an rpc_id that is not pending changes nothing (a desk's
frames cannot grow the server's table); the opener hanging up frees the batch.
"""

from __future__ import annotations

import asyncio
import json

from harness.mcp_util import BATCH, CEILING, bounded, client, server_socket


async def _line(reader: asyncio.StreamReader) -> dict:
    return json.loads(await asyncio.wait_for(reader.readline(), CEILING))


async def _until(reader: asyncio.StreamReader, kind: str) -> dict:
    while True:
        event = await _line(reader)
        if event["type"] == kind:
            return event


def _send(writer: asyncio.StreamWriter, *frames: dict) -> None:
    for frame in frames:
        writer.write((json.dumps(frame) + "\n").encode())


def test_an_opened_batch_is_taken_for_the_other_desk_and_freed_when_its_desk_hangs_up():
    async def main():
        async with client("--wait", "20") as mcp:
            path = str(await server_socket())
            opener_r, opener_w = await asyncio.open_unix_connection(path)
            other_r, other_w = await asyncio.open_unix_connection(path)
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            requested = await _until(opener_r, "question/requested")
            await _until(other_r, "question/requested")
            rpc_id = requested["rpc_id"]
            _send(opener_w, {"type": "desk/taken", "rpc_id": rpc_id},
                  {"type": "desk/opened", "rpc_id": 7},
                  {"type": "desk/opened", "rpc_id": "q_not_pending"},
                  {"type": "desk/opened", "rpc_id": rpc_id})
            bad = await _until(opener_r, "error")
            opened = await _until(other_r, "desk/opened")
            opener_w.close()  # the desk goes away, as a killed one does
            released = await _until(other_r, "desk/released")
            _send(other_w, {"type": "question/answer", "rpc_id": rpc_id,
                            "session_id": requested["session_id"],
                            "answers": [{"id": "db", "selected": ["SQLite"]}]})
            result = await asyncio.wait_for(call, CEILING)
            other_w.close()
            return rpc_id, bad, opened, released, result

    rpc_id, bad, opened, released, result = bounded(main())
    assert bad["code"] == "BAD_FRAME" and "desk/opened takes rpc_id" in bad["message"]
    # the first desk/opened the other desk hears is the pending batch's, not q_not_pending
    assert opened == {"type": "desk/opened", "rpc_id": rpc_id}
    assert released == {"type": "desk/released", "rpc_id": rpc_id}
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
