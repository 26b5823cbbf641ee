"""One settlement decides a batch, whoever comes second: across the real ``dsh mcp``.

A ``tasks/cancel`` sent the moment the desk's answer was acknowledged loses to the answer
(the task completes with it, the cancel is refused), and a task withdrawn by its TTL tells
its watchers so, as a cancelled one does.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from harness.mcp_util import bounded, jsonl_desk
from harness.tasks_wire import StdioDsh, Wire2025, Wire2026, ask_call, http_dsh

ANSWER = [{"id": "db", "selected": ["SQLite"]}]
ROUNDS = 30  # the old code lost 16-26 of 30 such rounds; one loss fails the test
NOT_FOUND = -32602


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One ``dsh mcp --http --wait 20`` (its own DSH_HOME): its URL and environment, for the two
    tests whose every round is settled at a desk of their own before they end (a desk that
    attaches later finds nothing pending). One process, not one per test."""
    env = {**os.environ, "DSH_HOME": str(tmp_path_factory.mktemp("served-home"))}
    with http_dsh("--wait", "20", env=env) as url:
        yield url, env


def until_ended(poll, task_id: str) -> dict:
    """``tasks/get`` until the task has ended (the process's own time bounds the test)."""
    while True:
        task = poll("tasks/get", {"taskId": task_id})["result"]
        if task["status"] in ("completed", "failed", "cancelled"):
            return task


async def _until(desk, seen: dict[str, dict], kind: str) -> None:
    """Read the desk's events into ``seen`` (by type) until one of ``kind`` is there: the
    batch's end and the answer's ack come in either order."""
    while kind not in seen:
        event = await desk.event()
        seen.setdefault(event["type"], event)


def test_a_cancel_and_the_desks_answer_agree_on_which_came_first_in_both_eras(served):
    """Each round sends the cancel right after the desk's answer was acknowledged, or at
    the same moment as the answer; whichever the server took first decides the task, the
    desk's ack and the history alike."""
    async def main():
        rounds = []
        url, env = served
        async with jsonl_desk(env=env) as desk:
            wire_2025, wire_2026 = await asyncio.to_thread(Wire2025, url), Wire2026(url)
            for number in range(ROUNDS):
                wire = wire_2025 if number % 2 == 0 else wire_2026
                params = ask_call({"ttl": 60_000}) if wire is wire_2025 else ask_call()
                created = (await asyncio.to_thread(wire.request, "tools/call",
                                                   params))["result"]
                task_id = (created["task"] if wire is wire_2025 else created)["taskId"]
                requested = await desk.event("question/requested")
                await desk.answer(requested, ANSWER)
                together = number % 4 >= 2
                seen: dict[str, dict] = {}
                if not together:
                    await _until(desk, seen, "response/ack")
                cancel = await asyncio.to_thread(wire.request, "tasks/cancel",
                                                 {"taskId": task_id})
                await _until(desk, seen, "response/ack")
                task = await asyncio.to_thread(until_ended, wire.request, task_id)
                await _until(desk, seen, "question/resolved")
                ack, resolved = seen["response/ack"], seen["question/resolved"]
                rounds.append((wire is wire_2025, together, ack, cancel, task, resolved))
        return rounds

    for on_2025, together, ack, cancel, task, resolved in bounded(main(), 240):
        seen = (on_2025, together, ack, cancel, task)
        if ack["accepted"]:  # the desk was told its answer counts: so it must
            assert resolved["outcome"] == "answered", seen
            assert task["status"] == "completed", seen
            if on_2025:  # an ended task cannot be cancelled (2025-11-25)
                assert cancel["error"]["code"] == NOT_FOUND, seen
                assert "completed" in cancel["error"]["message"], seen
            else:  # acknowledged; the task is what it was
                assert cancel["result"]["resultType"] == "complete", seen
                assert task["result"]["structuredContent"]["answers"] == ANSWER, seen
        else:  # the cancel came first: the answer was refused, and nothing says answered
            assert together and ack["reason"] == "not-pending", seen
            assert resolved["outcome"] == "aborted", seen
            assert task["status"] == "cancelled", seen


def test_a_task_withdrawn_by_its_ttl_sends_its_cancelled_status_as_a_cancelled_one_does():
    dsh = StdioDsh("--wait", "60")  # no desk: the question waits until the ttl ends it
    try:
        dsh.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "tasks-test", "version": "1.0"}})
        dsh.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        created = dsh.request("tools/call", ask_call({"ttl": 300}))["result"]["task"]
        deadline = time.monotonic() + 60  # a withdrawal that never comes fails, not hangs
        while "error" not in dsh.request("tasks/get", {"taskId": created["taskId"]}):
            assert time.monotonic() < deadline, "the task outlived its ttl"
        dsh.request("ping")  # a notice sent with the withdrawal is on the wire before this
        statuses = [message["params"] for message in dsh.notifications
                    if message.get("method") == "notifications/tasks/status"]
    finally:
        dsh.close()
    assert [(status["taskId"], status["status"]) for status in statuses] == [
        (created["taskId"], "cancelled")]
    assert "time to live" in statuses[0]["statusMessage"]


def test_a_cancel_and_the_desks_permission_decision_agree_on_which_came_first(served):
    """``approve_tool_use`` as a 2025 task: a ``tasks/cancel`` right after the desk's decision
    was acknowledged, or at the same moment, loses to a decision the desk was told counts
    (the task completes with it); one that came first makes the decision ``not-pending``."""
    async def main():
        rounds = []
        url, env = served
        async with jsonl_desk(env=env) as desk:
            session = await asyncio.to_thread(Wire2025, url)
            for number in range(ROUNDS):
                approve = {"name": "approve_tool_use", "task": {"ttl": 60_000},
                           "arguments": {"tool_name": "Bash",
                                         "input": {"command": f"make round-{number}"}}}
                created = (await asyncio.to_thread(session.request, "tools/call",
                                                   approve))["result"]["task"]
                requested = await desk.event("permission/requested")
                await desk.send({"type": "permission/decision",
                                 "rpc_id": requested["rpc_id"],
                                 "session_id": requested["session_id"],
                                 "decision": "allow_once"})
                together = number % 2 == 1
                seen: dict[str, dict] = {}
                if not together:
                    await _until(desk, seen, "response/ack")
                cancel = await asyncio.to_thread(session.request, "tasks/cancel",
                                                 {"taskId": created["taskId"]})
                await _until(desk, seen, "response/ack")
                task = await asyncio.to_thread(until_ended, session.request,
                                               created["taskId"])
                result = await asyncio.to_thread(session.request, "tasks/result",
                                                 {"taskId": created["taskId"]})
                await _until(desk, seen, "permission/resolved")
                rounds.append((together, seen["response/ack"], cancel, task, result,
                               seen["permission/resolved"]))
        return rounds

    for together, ack, cancel, task, result, resolved in bounded(main(), 240):
        seen = (together, ack, cancel, task, result)
        if ack["accepted"]:  # the desk was told its decision counts: so it must
            assert resolved["outcome"] == "decided", seen
            assert task["status"] == "completed", seen
            assert cancel["error"]["code"] == NOT_FOUND, seen
            assert "completed" in cancel["error"]["message"], seen
            assert json.loads(result["result"]["content"][0]["text"])["behavior"] == "allow"
        else:  # the cancel came first: the decision was refused, and nothing says decided
            assert together and ack["reason"] == "not-pending", seen
            assert resolved["outcome"] == "aborted", seen
            assert task["status"] == "cancelled", seen
            assert "cancelled" in result["error"]["message"], seen
