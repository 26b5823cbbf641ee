"""``dsh mcp`` answered at ``dsh attach --jsonl``: labels, replay, cancel, timeout, progress."""

from __future__ import annotations

import asyncio
import os

import pytest
from harness.mcp_util import BATCH, QUESTION, SharedClient, bounded, client, jsonl_desk

ERAS = ["legacy", "auto"]


@pytest.fixture(scope="module")
def waiting(tmp_path_factory):
    """One ``dsh mcp --wait 20`` (its own DSH_HOME) for the tests whose batches are all
    settled at a desk of their own (``jsonl_desk(env=waiting.env)``) before they end: a desk
    that attaches later finds nothing pending. One child, not one per test (each start is
    about a second of CPU); the tests of the agent's name, its directory, a timeout, a client
    going away, and two servers keep their own."""
    home = tmp_path_factory.mktemp("waiting-home")
    shared = SharedClient("--wait", "20", env={**os.environ, "DSH_HOME": str(home)})
    yield shared
    shared.close()


@pytest.mark.parametrize("mode", ERAS)
def test_answered_at_the_jsonl_desk_with_its_source(mode, tmp_path):
    async def main():
        async with jsonl_desk() as desk, \
                client("--wait", "20", name="claude-code", mode=mode, cwd=str(tmp_path)) as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            await desk.answer(requested, [{"id": "db", "selected": ["SQLite"]}])
            result = await call
            ack = await desk.event("response/ack")
            resolved = await desk.event("question/resolved")
            return requested, result, ack, resolved

    requested, result, ack, resolved = bounded(main())
    assert requested["questions"] == [{**QUESTION, "multi_select": False}]
    assert requested["source"]["client"] == "Claude Code"
    assert os.path.realpath(requested["source"]["cwd"]) == os.path.realpath(tmp_path)
    assert isinstance(requested["source"]["pid"], int)
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    assert ack["accepted"] is True
    assert resolved == {"type": "question/resolved", "rpc_id": requested["rpc_id"],
                        "outcome": "answered",
                        "answer": {"answers": [{"id": "db", "selected": ["SQLite"]}]}}


def test_a_bad_answer_keeps_the_batch_pending(waiting):
    async def main():
        async with jsonl_desk(env=waiting.env) as desk:
            call = asyncio.ensure_future(waiting.call("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            await desk.answer(requested, [{"id": "db", "selected": ["MySQL"]}])
            refused = await desk.event("response/ack")
            await desk.answer(requested, [{"id": "db", "selected": [], "custom": "Mongo"}])
            return refused, await call

    refused, result = bounded(main())
    assert refused["accepted"] is False and refused["reason"] == "bad-response"
    assert result.structured_content == {"answers": [{"id": "db", "selected": [],
                                                      "custom": "Mongo"}]}


def test_cancelled_at_the_desk(waiting):
    async def main():
        async with jsonl_desk(env=waiting.env) as desk:
            call = asyncio.ensure_future(waiting.call("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            await desk.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                             "session_id": requested["session_id"]})
            return await call, await desk.event("question/resolved")

    result, resolved = bounded(main())
    assert result.structured_content["error"]["code"] == "ASK_CANCELLED"
    assert resolved["outcome"] == "cancelled"


def test_question_timeout():
    async def main():
        async with jsonl_desk() as desk, \
                client("--wait", "20", "--question-timeout", "1") as mcp:
            result = await mcp.call_tool("ask_user_question", BATCH)
            await desk.event("question/requested")
            return result, await desk.event("question/resolved")

    result, resolved = bounded(main())
    assert result.structured_content["error"]["code"] == "ASK_TIMEOUT"
    assert resolved["outcome"] == "timeout"


def test_the_agent_cancelling_aborts_the_batch_and_the_desk_drops_it(waiting):
    async def main():
        async with jsonl_desk(env=waiting.env) as desk:
            call = asyncio.ensure_future(waiting.call("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            call.cancel()  # the SDK sends notifications/cancelled
            with pytest.raises(asyncio.CancelledError):
                await call
            resolved = await desk.event("question/resolved")
            # the server still serves the next call
            again = asyncio.ensure_future(waiting.call("ask_user_question", BATCH))
            second = await desk.event("question/requested")
            await desk.answer(second, [{"id": "db", "selected": ["SQLite"]}])
            return requested, resolved, await again

    requested, resolved, again = bounded(main())
    assert resolved["rpc_id"] == requested["rpc_id"]
    assert resolved["outcome"] == "aborted"
    assert again.is_error is False


def test_a_client_that_disconnects_mid_question_aborts_it():
    async def main():
        async with jsonl_desk() as desk:
            async with client("--wait", "20") as mcp:
                pending = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                requested = await desk.event("question/requested")
            # leaving the block closed the client: dsh mcp saw its stdin end
            resolved = await desk.event("question/resolved")
            pending.cancel()
            return requested, resolved

    requested, resolved = bounded(main())
    assert resolved["rpc_id"] == requested["rpc_id"]
    assert resolved["outcome"] == "aborted"


def test_desk_closed_and_reopened_mid_batch_gets_the_same_rpc_id(waiting):
    async def main():
        call = asyncio.ensure_future(waiting.call("ask_user_question", BATCH))
        async with jsonl_desk(env=waiting.env) as first:
            requested = await first.event("question/requested")
            assert await first.close() == 0
        async with jsonl_desk(env=waiting.env) as second:
            again = await second.event("question/requested")
            await second.answer(again, [{"id": "db", "selected": ["SQLite"]}])
            result = await call
        return requested, again, result

    requested, again, result = bounded(main())
    assert again["rpc_id"] == requested["rpc_id"]
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_two_servers_one_jsonl_desk_each_labelled(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()

    async def main():
        async with jsonl_desk() as desk, \
                client("--wait", "20", name="agent-a", cwd=str(tmp_path / "a")) as a, \
                client("--wait", "20", name="agent-b", cwd=str(tmp_path / "b")) as b:
            call_a = asyncio.ensure_future(a.call_tool("ask_user_question", BATCH))
            first = await desk.event("question/requested")
            call_b = asyncio.ensure_future(b.call_tool("ask_user_question", BATCH))
            second = await desk.event("question/requested")
            await desk.answer(second, [{"id": "db", "selected": ["SQLite"]}])
            await desk.answer(first, [{"id": "db", "selected": ["PostgreSQL (Recommended)"]}])
            return first, second, await call_a, await call_b

    first, second, result_a, result_b = bounded(main())
    assert first["source"]["client"] == "agent-a"
    assert second["source"]["client"] == "agent-b"
    assert first["source"]["pid"] != second["source"]["pid"]
    assert result_a.structured_content["answers"][0]["selected"] == ["PostgreSQL (Recommended)"]
    assert result_b.structured_content["answers"][0]["selected"] == ["SQLite"]


def test_progress_notifications_while_a_batch_waits(waiting):
    seen = []

    async def progress(done, total, message):
        seen.append(message)

    async def main():
        async with jsonl_desk(env=waiting.env) as desk:
            call = asyncio.ensure_future(
                waiting.call("ask_user_question", BATCH, progress_callback=progress))
            requested = await desk.event("question/requested")
            for _ in range(200):
                if seen:
                    break
                await asyncio.sleep(0.05)
            await desk.answer(requested, [{"id": "db", "selected": ["SQLite"]}])
            return await call

    result = bounded(main())
    assert result.is_error is False
    assert seen and "dsh desk" in seen[0]


def test_unknown_rpc_id_at_the_jsonl_desk_is_not_pending_and_garbage_is_a_bad_frame():
    async def main():
        async with jsonl_desk() as desk:
            await desk.send({"type": "question/cancel", "rpc_id": "q_nope"})
            ack = await desk.event()
            desk.process.stdin.write(b"not json\n")
            error = await desk.event()
            return ack, error, await desk.close()

    ack, error, status = bounded(main())
    assert ack["reason"] == "not-pending"
    assert error["code"] == "BAD_FRAME"
    assert status == 0


@pytest.mark.parametrize(("client_name", "shown"), [
    ("codex-mcp-client", "Codex"), ("gemini-cli-mcp-client", "Gemini CLI"),
    ("my\x1b[2Jagent\u202e", "myagent")])
def test_the_desk_names_the_agent_as_people_know_it(client_name, shown):
    async def main():
        async with jsonl_desk() as desk, client("--wait", "20", name=client_name) as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            await desk.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                             "session_id": requested["session_id"]})
            await call
            return requested

    assert bounded(main())["source"]["client"] == shown
