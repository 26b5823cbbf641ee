"""One settlement decides a batch, whoever comes second: across the real ``dsh mcp``.

A ``tasks/cancel`` sent the moment the desk's answer was acknowledged loses to the answer
(the task completes with it, the cancel is refused), and a task withdrawn by its TTL tells
its watchers so, as a cancelled one does.
"""

from __future__ import annotations

import asyncio

from mcp_util import bounded, jsonl_desk
from tasks_wire import Legacy, Modern, StdioDsh, ask_call, http_dsh

ANSWER = [{"id": "db", "selected": ["SQLite"]}]
ANSWERED = {"answers": ANSWER}
ROUNDS = 30  # the old code lost 16-26 of 30 such rounds; one loss fails the test
NOT_FOUND = -32602


def until_ended(poll, task_id: str) -> dict:
    """``tasks/get`` until the task has ended (the process's own time bounds the test)."""
    while True:
        task = poll("tasks/get", {"taskId": task_id})["result"]
        if task["status"] in ("completed", "failed", "cancelled"):
            return task


def test_a_cancel_right_after_the_desks_answer_was_accepted_loses_to_it_in_both_eras():
    async def main():
        rounds = []
        async with jsonl_desk() as desk:
            with http_dsh("--wait", "20") as url:
                legacy, modern = await asyncio.to_thread(Legacy, url), Modern(url)
                for number in range(ROUNDS):
                    wire = legacy if number % 2 == 0 else modern
                    params = ask_call({"ttl": 60_000}) if wire is legacy else ask_call()
                    created = (await asyncio.to_thread(wire.request, "tools/call",
                                                       params))["result"]
                    task_id = (created["task"] if wire is legacy else created)["taskId"]
                    requested = await desk.event("question/requested")
                    await desk.answer(requested, ANSWER)
                    ack = await desk.event("response/ack")
                    cancel = await asyncio.to_thread(wire.request, "tasks/cancel",
                                                     {"taskId": task_id})
                    task = await asyncio.to_thread(until_ended, wire.request, task_id)
                    resolved = await desk.event("question/resolved")
                    rounds.append((wire is legacy, ack, cancel, task, resolved))
        return rounds

    for legacy, ack, cancel, task, resolved in bounded(main(), 240):
        assert ack["accepted"] is True  # the desk was told its answer counts: so it must
        assert resolved["outcome"] == "answered"
        assert task["status"] == "completed", (legacy, cancel, task)
        if legacy:  # an ended task cannot be cancelled (2025-11-25)
            assert cancel["error"]["code"] == NOT_FOUND, cancel
            assert "completed" in cancel["error"]["message"]
        else:  # acknowledged; the task is what it was
            assert cancel["result"]["resultType"] == "complete"
            assert task["result"]["structuredContent"] == ANSWERED


def test_a_task_withdrawn_by_its_ttl_sends_its_cancelled_status_as_a_cancelled_one_does():
    dsh = StdioDsh("--wait", "60")  # no desk: the question waits until the ttl ends it
    try:
        dsh.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "tasks-test", "version": "1.0"}})
        dsh.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        created = dsh.request("tools/call", ask_call({"ttl": 300}))["result"]["task"]
        while "error" not in dsh.request("tasks/get", {"taskId": created["taskId"]}):
            pass  # working, then cancelled, then forgotten
        dsh.request("ping")  # a notice sent with the withdrawal is on the wire before this
        statuses = [message["params"] for message in dsh.notifications
                    if message.get("method") == "notifications/tasks/status"]
    finally:
        dsh.close()
    assert [(status["taskId"], status["status"]) for status in statuses] == [
        (created["taskId"], "cancelled")]
    assert "time to live" in statuses[0]["statusMessage"]
