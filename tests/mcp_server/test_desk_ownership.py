"""The one ownership rule at the desk: a real `dsh mcp` refuses every settling frame a desk
(`dsh attach --jsonl`, another process) sends for another session than the batch's or the
permission request's own, or for none, settles nothing, and then takes the frame that names
it; the human's `dsh attach --plain` names it by itself (issue 36)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from contextlib import asynccontextmanager

import pytest
from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, CEILING, SharedClient, bounded, client, jsonl_desk
from harness.ownership_frames import foreign, refusals, settling

ANSWERS = [{"id": "db", "selected": ["SQLite"]}]
APPROVE = {"tool_name": "Bash", "input": {"command": "git push --force"},
           "tool_use_id": "toolu_36"}
# verb: (the tool the agent calls, its arguments, the event a desk sees)
CASES = {
    "answer": ("ask_user_question", BATCH, "question/requested"),
    "cancel": ("ask_user_question", BATCH, "question/requested"),
    "decision": ("approve_tool_use", APPROVE, "permission/requested"),
}


@pytest.fixture(scope="module")
def waiting(tmp_path_factory):
    """One ``dsh mcp --wait 20`` (its own DSH_HOME) for the answer and cancel cases, whose one
    batch is settled at a desk of their own before they end (a desk that attaches later finds
    nothing pending). The decision case keeps its own: its "always" is kept in DSH_HOME."""
    home = tmp_path_factory.mktemp("waiting-home")
    shared = SharedClient("--wait", "20", env={**os.environ, "DSH_HOME": str(home)})
    yield shared
    shared.close()


@asynccontextmanager
async def _asker(verb: str, waiting: SharedClient | None):
    """The desk and the server's ``call_tool`` for ``verb``'s case."""
    if verb == "decision":
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            yield desk, mcp.call_tool
    else:
        assert waiting is not None
        async with jsonl_desk(env=waiting.env) as desk:
            yield desk, waiting.call


@pytest.mark.parametrize("verb", CASES)
def test_a_desk_frame_for_another_session_settles_nothing(verb, request):
    tool, arguments, kind = CASES[verb]
    fields = {"answers": ANSWERS} if verb == "answer" else {}
    waiting = None if verb == "decision" else request.getfixturevalue("waiting")

    async def main():
        async with _asker(verb, waiting) as (desk, call_tool):
            call = asyncio.ensure_future(call_tool(tool, arguments))
            requested = await desk.event(kind)
            await desk.event("inbox/changed")  # the entry added to the desk's list
            for frame in foreign(verb, requested, **fields):
                await desk.send(frame)
            refused = [await desk.event() for _ in range(3)]
            pending = not call.done()
            await desk.send(settling(verb, requested, **fields))
            return requested, refused, pending, await desk.event("response/ack"), await call

    requested, refused, pending, ack, result = bounded(main())
    assert isinstance(requested["session_id"], str)  # dsh mcp records its batches
    assert refused == refusals(requested) and pending
    assert ack == {"type": "response/ack", "rpc_id": requested["rpc_id"], "accepted": True}
    if verb == "answer":
        assert result.structured_content == {"answers": ANSWERS}
    elif verb == "cancel":
        assert result.structured_content["error"]["code"] == "ASK_CANCELLED"
    else:
        assert json.loads(result.content[0].text)["behavior"] == "allow"


async def _read_until(stream, text: str) -> str:
    seen = ""
    while text not in seen:
        chunk = await asyncio.wait_for(stream.read(4096), CEILING)
        assert chunk, f"the desk ended before {text!r}; it wrote {seen!r}"
        seen += chunk.decode()
    return seen


def test_a_batch_cancelled_at_the_plain_desk_is_cancelled_for_the_agent():
    async def main():
        desk = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            await _read_until(desk.stdout, "nothing pending")
            async with client("--wait", "20") as mcp:
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                await _read_until(desk.stdout, "+ 1.")
                desk.stdin.write(b"x 1\n")  # dismissed from the inbox: cancelled
                result = await asyncio.wait_for(call, CEILING)
            desk.stdin.close()
            await asyncio.wait_for(desk.wait(), CEILING)
            return result
        finally:
            if desk.returncode is None:
                desk.kill()

    result = bounded(main())
    assert result.structured_content["error"]["code"] == "ASK_CANCELLED"
