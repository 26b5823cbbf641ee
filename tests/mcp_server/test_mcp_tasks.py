"""MCP tasks on ``dsh mcp``, both eras, over HTTP and stdio, through the real process.

2025-11-25: ``task`` on ``tools/call``, ``tasks/get|result|list|cancel``,
``notifications/tasks/status``. 2026-07-28: the tasks extension (``resultType: "task"``,
``tasks/get`` inlining the result, ``tasks/update``, ``tasks/cancel``, ``notifications/tasks``
on a ``subscriptions/listen`` stream naming the task ids). A task is its
session's alone; its TTL is honoured and bounded; a client back within the TTL gets it.
Only a question asked with ``delivery: "async"`` becomes a task (and ``approve_tool_use``
where a 2025 client asks for one): a question that waits is answered plainly, for every
client, so these tests ask async unless they say ``delivery="wait"``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re

import pytest
from harness.mcp_util import bounded, jsonl_desk
from harness.tasks_wire import EXTENSION, Listener, StdioDsh, Wire2025, Wire2026, ask_call, http_dsh

from dsh_cli.core.limits import TASK_TTL_MAX_MS

ANSWERED = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
NOT_FOUND = -32602


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"db": ["SQLite"]}))
    return str(path)


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    """The URL of one ``dsh mcp --http --answers`` for the tests whose tasks are their own:
    a 2025 task is its session's, a 2026 one is reached by its id. One process, not one per
    test (each start is about a second of CPU); its own DSH_HOME."""
    home = tmp_path_factory.mktemp("answered-home")
    answers = home / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    with http_dsh("--answers", str(answers), env={**os.environ, "DSH_HOME": str(home)}) as url:
        yield url


@pytest.fixture(scope="module")
def waiting(tmp_path_factory):
    """The URL of one ``dsh mcp --http --wait 60`` with no desk (its own DSH_HOME), where
    every question waits: for the tests whose waiting tasks are their own session's (a
    session's tasks and its cap are its alone) and one refused before it is asked. One
    process, not one per test."""
    home = tmp_path_factory.mktemp("waiting-home")
    with http_dsh("--wait", "60", env={**os.environ, "DSH_HOME": str(home)}) as url:
        yield url


@pytest.fixture(scope="module")
def desked(tmp_path_factory):
    """One ``dsh mcp --http --wait 20`` (its own DSH_HOME): its URL and environment, for the
    tests whose every batch is settled (answered, dismissed, decided, cancelled or withdrawn
    with its session) at a desk of their own before they end, so a desk that attaches later
    finds nothing pending. One process, not one per test."""
    env = {**os.environ, "DSH_HOME": str(tmp_path_factory.mktemp("desked-home"))}
    with http_dsh("--wait", "20", env=env) as url:
        yield url, env


def told(structured: dict) -> dict:
    """A task's outcome without the sentence and ticket that say whose answer it is."""
    assert structured["told"].startswith("This is the human's answer to your question (ticket "
                                         f"{structured['ticket']})"), structured
    return {key: value for key, value in structured.items() if key not in ("told", "ticket")}


def unstamped(result: dict) -> dict:
    """A 2026 result without its ``_meta``, which names the server as every 2026 result does."""
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "dsh"
    return {key: value for key, value in result.items() if key != "_meta"}


def until_ended(poll, task_id: str) -> dict:
    """``tasks/get`` until the task has ended (the process's own time bounds the test)."""
    while True:
        got = poll("tasks/get", {"taskId": task_id})
        task = got["result"]
        if task["status"] in ("completed", "failed", "cancelled"):
            return task


def test_a_2025_task_over_http_runs_apart_and_tasks_result_returns_the_answer(answered):
    url = answered
    session = Wire2025(url)
    assert session.initialized["capabilities"]["tasks"] == {
        "list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    tools = session.request("tools/list")["result"]["tools"]
    assert {tool["name"]: tool.get("execution") for tool in tools} == {
        "ask_user_question": {"taskSupport": "optional"},
        "approve_tool_use": {"taskSupport": "optional"},
        "get_user_answer": None}  # a fetch whose wait is capped: no task
    created = session.request("tools/call", ask_call({"ttl": 60_000}))["result"]["task"]
    assert created["status"] == "working" and created["ttl"] == 60_000
    assert len(created["taskId"]) >= 43  # 256 random bits
    result = session.request("tasks/result", {"taskId": created["taskId"]})["result"]
    assert told(result["structuredContent"]) == ANSWERED and result["isError"] is False
    assert "resultType" not in result
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {
        "taskId": created["taskId"]}
    task = session.request("tasks/get", {"taskId": created["taskId"]})["result"]
    assert task["status"] == "completed"
    listed = session.request("tasks/list", {})["result"]["tasks"]
    assert [entry["taskId"] for entry in listed] == [created["taskId"]]
    refused = session.request("tasks/cancel", {"taskId": created["taskId"]})["error"]
    assert refused["code"] == NOT_FOUND and "already completed" in refused["message"]
    # a call without ``task`` is served as ever
    plain = session.request("tools/call", ask_call(delivery="wait"))["result"]
    assert plain["structuredContent"] == ANSWERED and "task" not in plain


def test_a_2025_task_over_stdio_sends_its_status_notifications(answers):
    dsh = StdioDsh("--answers", answers)
    try:
        dsh.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "tasks-test", "version": "1.0"}})
        dsh.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        created = dsh.request("tools/call", ask_call({}))["result"]["task"]
        assert created["ttl"] == 60 * 60 * 1000  # no ttl asked: an hour
        status = dsh.notification("notifications/tasks/status")
        assert status["params"]["taskId"] == created["taskId"]
        assert status["params"]["status"] == "completed"
        result = dsh.request("tasks/result", {"taskId": created["taskId"]})["result"]
        assert told(result["structuredContent"]) == ANSWERED
    finally:
        dsh.close()


def test_a_2026_task_over_http_inlines_its_result_in_tasks_get(answered):
    url = answered
    wire = Wire2026(url)
    created = wire.request("tools/call", ask_call())["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["ttlMs"] == 60 * 60 * 1000 and "task" not in created
    task = until_ended(wire.request, created["taskId"])
    assert task["resultType"] == "complete" and task["status"] == "completed"
    assert told(task["result"]["structuredContent"]) == ANSWERED
    update = wire.request("tasks/update", {"taskId": created["taskId"],
                                           "inputResponses": {}})
    assert unstamped(update["result"]) == {"resultType": "complete"}
    for _ in range(2):  # an ended task's cancel is the same empty ack
        cancelled = wire.request("tasks/cancel", {"taskId": created["taskId"]})
        assert unstamped(cancelled["result"]) == {"resultType": "complete"}
    for gone in ("tasks/result", "tasks/list"):
        assert wire.request(gone, {"taskId": created["taskId"]})["error"]["code"] == -32601
    unknown = wire.request("tasks/get", {"taskId": "no-such-task"})["error"]
    assert unknown["code"] == NOT_FOUND
    mismatched = wire.request("tasks/get", {"taskId": created["taskId"]},
                              headers={"Mcp-Name": "another-task"})["error"]
    assert mismatched["code"] == -32020


def test_without_the_extension_a_2026_call_is_answered_and_tasks_are_refused(answered):
    url = answered
    created = Wire2026(url).request("tools/call", ask_call())["result"]
    plain = Wire2026(url, tasks=False)
    result = plain.request("tools/call", ask_call(delivery="wait"))["result"]
    assert result["resultType"] == "complete"
    assert result["structuredContent"] == ANSWERED
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        error = plain.request(method, {"taskId": created["taskId"]})["error"]
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    # and a 2025 session cannot reach a 2026 task either
    session = Wire2025(url)
    assert session.request("tasks/get", {"taskId": created["taskId"]})["error"][
        "code"] == NOT_FOUND


def test_a_question_that_waits_is_answered_plainly_whatever_the_client_takes(answered):
    """Issue 42: a client that can take tasks (Claude Code's TUI backgrounds them) still
    gets a waiting question's answer as the call's own result, in either era."""
    url = answered
    plain_2026 = Wire2026(url).request("tools/call", ask_call(delivery="wait"))["result"]
    session = Wire2025(url)
    plain_2025 = session.request("tools/call", ask_call({"ttl": 60_000}, delivery="wait"))
    listed = session.request("tasks/list", {})["result"]["tasks"]
    assert plain_2026["resultType"] == "complete" and "taskId" not in plain_2026
    assert plain_2026["structuredContent"] == ANSWERED
    assert "task" not in plain_2025["result"]
    assert plain_2025["result"]["structuredContent"] == ANSWERED
    assert listed == []


AGENT_TASK = "com.anthropic/agent-task"
TOLD = re.compile(r"This is the human's answer to your question \(ticket (q_[0-9a-f]{16})\), "
                  r"given by the human at their dsh desk at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d "
                  r"UTC: (.*)")


def test_an_async_task_says_what_will_happen_and_whose_answer_it_is(desked):
    """Its creation tells the model (Claude Code's ``modelImmediateResponse``) that the
    human answers later; its result says the human answered, at the desk, when, which ticket;
    a batch the human dismisses says so."""
    async def main():
        url, env = desked
        async with jsonl_desk(env=env) as desk:
            wire = Wire2026(url)
            ended = []
            for settle in ("answer", "cancel"):
                created = (await asyncio.to_thread(wire.request, "tools/call",
                                                   ask_call()))["result"]
                asked = await desk.event("question/requested")
                if settle == "answer":
                    await desk.answer(asked, ANSWERED["answers"])
                else:
                    await desk.send({"type": "question/cancel", "rpc_id": asked["rpc_id"],
                                     "session_id": asked["session_id"]})
                task = await asyncio.to_thread(until_ended, wire.request,
                                               created["taskId"])
                ended.append((created, asked, task))
            return ended

    (created, asked, task), (_, dismissed, cancelled) = bounded(main())
    note = created["_meta"][AGENT_TASK]["modelImmediateResponse"]
    assert f"ticket {asked['rpc_id']}" in note and "the human's answer to this question" in note
    assert len(note) <= 20_000  # Claude Code's cap
    assert asked["delivery"] == "async"
    text = task["result"]["content"][0]["text"]
    found = TOLD.fullmatch(text)
    assert found and found.group(1) == asked["rpc_id"], text
    assert json.loads(found.group(2)) == ANSWERED
    assert told(task["result"]["structuredContent"]) == ANSWERED
    assert task["result"]["structuredContent"]["ticket"] == asked["rpc_id"]
    refused = cancelled["result"]["structuredContent"]
    assert refused["told"].startswith(
        f"The human dismissed your question (ticket {dismissed['rpc_id']}) without answering")
    assert refused["error"]["code"] == "ASK_CANCELLED" and cancelled["result"]["isError"]


def test_an_async_question_refused_at_once_makes_no_task(waiting):
    """Refused when it is asked (two questions with one id: the seam's check), the call's
    result says so plainly; no task is made. (With no desk an async batch is not refused: it
    waits for the first desk.)"""
    call = ask_call()
    question = call["arguments"]["questions"][0]
    call["arguments"] = {**call["arguments"], "questions": [question, question]}
    result = Wire2026(waiting).request("tools/call", call)["result"]
    assert result["resultType"] == "complete" and "taskId" not in result
    assert result["isError"], result


def test_a_task_is_its_own_http_sessions_alone(waiting):
    url = waiting  # no desk: the question waits
    mine, theirs = Wire2025(url), Wire2025(url)
    created = mine.request("tools/call", ask_call({"ttl": 60_000}))["result"]["task"]
    task_id = {"taskId": created["taskId"]}
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        error = theirs.request(method, task_id)["error"]
        assert error["code"] == NOT_FOUND, method
    assert theirs.request("tasks/list", {})["result"]["tasks"] == []
    assert mine.request("tasks/get", task_id)["result"]["status"] == "working"
    cancelled = mine.request("tasks/cancel", task_id)["result"]
    assert cancelled["status"] == "cancelled"
    assert mine.request("tasks/get", task_id)["result"]["status"] == "cancelled"


def test_the_desk_shows_a_task_batch_and_a_cancelled_task_withdraws_it(desked):
    async def main():
        url, env = desked
        async with jsonl_desk(env=env) as desk:
            session = await asyncio.to_thread(Wire2025, url)
            created = (await asyncio.to_thread(
                session.request, "tools/call", ask_call({})))["result"]["task"]
            requested = await desk.event("question/requested")
            await asyncio.to_thread(session.request, "tasks/cancel",
                                    {"taskId": created["taskId"]})
            resolved = await desk.event("question/resolved")
            return requested, resolved

    requested, resolved = bounded(main())
    assert requested["questions"][0]["id"] == "db"
    assert resolved["rpc_id"] == requested["rpc_id"] and resolved["outcome"] == "aborted"


def test_a_tasks_ttl_is_bounded_and_a_task_past_it_is_withdrawn_and_forgotten(waiting):
    url = waiting
    session = Wire2025(url)
    huge = session.request("tools/call", ask_call({"ttl": 10 ** 12}))["result"]["task"]
    assert huge["ttl"] == TASK_TTL_MAX_MS
    brief = session.request("tools/call", ask_call({"ttl": 300}))["result"]["task"]
    while "error" not in (got := session.request("tasks/get",
                                                 {"taskId": brief["taskId"]})):
        assert got["result"]["status"] in ("working", "cancelled")
    assert got["error"]["code"] == NOT_FOUND
    listed = session.request("tasks/list", {})["result"]["tasks"]
    assert [task["taskId"] for task in listed] == [huge["taskId"]]


def test_a_client_back_within_the_ttl_gets_its_result(desked):
    """The wait on ``tasks/result`` broke (the connection dropped); the task went on, and
    the same session on a new connection, and the 2026 wire by task id, get the answer."""
    async def main():
        url, env = desked
        async with jsonl_desk(env=env) as desk:
            session = await asyncio.to_thread(Wire2025, url)
            created = (await asyncio.to_thread(
                session.request, "tools/call", ask_call({"ttl": 60_000})))["result"]["task"]
            first = await desk.event("question/requested")
            with pytest.raises(TimeoutError):
                await asyncio.to_thread(session.request, "tasks/result",
                                        {"taskId": created["taskId"]}, 0.5)
            await desk.answer(first, [{"id": "db", "selected": ["SQLite"]}])
            result = await asyncio.to_thread(session.request, "tasks/result",
                                             {"taskId": created["taskId"]})
            wire = Wire2026(url)
            later = (await asyncio.to_thread(wire.request, "tools/call",
                                             ask_call()))["result"]
            second = await desk.event("question/requested")
            await desk.answer(second, [{"id": "db", "selected": ["SQLite"]}])
            task = await asyncio.to_thread(until_ended, wire.request, later["taskId"])
            return result["result"], task

    result, task = bounded(main())
    assert told(result["structuredContent"]) == ANSWERED
    assert task["status"] == "completed" and told(task["result"]["structuredContent"]) == ANSWERED


def test_approve_tool_use_holds_a_2026_call_and_is_a_task_only_where_a_client_asks(desked):
    """The extension lets the server decide, and a permission prompt waits: the 2026 call
    is held until the desk decides; a 2025 client that asks for a task gets one."""
    request = {"tool_name": "Bash", "input": {"command": "rm -rf build"},
               "tool_use_id": "toolu_01"}
    approve = {"name": "approve_tool_use", "arguments": request}

    async def main():
        url, env = desked
        async with jsonl_desk(env=env) as desk:
            call = asyncio.ensure_future(asyncio.to_thread(
                Wire2026(url).request, "tools/call", approve))
            held = await desk.event("permission/requested")
            assert not call.done()  # the call waits for the desk
            await desk.send({"type": "permission/decision", "rpc_id": held["rpc_id"],
                             "session_id": held["session_id"], "decision": "allow_once"})
            plain = (await call)["result"]
            session = await asyncio.to_thread(Wire2025, url)
            created = (await asyncio.to_thread(session.request, "tools/call",
                                               {**approve, "task": {}}))["result"]["task"]
            asked = await desk.event("permission/requested")
            await desk.send({"type": "permission/decision", "rpc_id": asked["rpc_id"],
                             "session_id": asked["session_id"], "decision": "deny",
                             "message": "not now"})
            result = await asyncio.to_thread(session.request, "tasks/result",
                                             {"taskId": created["taskId"]})
            return held, plain, created, result["result"]

    held, plain, created, result = bounded(main())
    assert held["tool"] == "Bash" and held["source"]["client"] == "tasks-test"
    assert plain["resultType"] == "complete" and "taskId" not in plain
    assert json.loads(plain["content"][0]["text"]) == {
        "behavior": "allow", "updatedInput": {"command": "rm -rf build"}}
    assert created["status"] == "working"
    assert json.loads(result["content"][0]["text"])["behavior"] == "deny"


def test_a_session_that_ends_withdraws_its_waiting_tasks(desked):
    async def main():
        url, env = desked
        async with jsonl_desk(env=env) as desk:
            session = await asyncio.to_thread(Wire2025, url)
            await asyncio.to_thread(session.request, "tools/call", ask_call({}))
            requested = await desk.event("question/requested")
            await asyncio.to_thread(_delete, url, session.headers())
            return requested, await desk.event("question/resolved")

    requested, resolved = bounded(main())
    assert resolved["rpc_id"] == requested["rpc_id"] and resolved["outcome"] == "aborted"


def _delete(url: str, headers: dict[str, str]) -> int:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    connection.request("DELETE", parts.path, headers=headers)
    status = connection.getresponse().status
    connection.close()
    assert status < 400, status
    return status


def test_a_session_holds_32_tasks_the_oldest_ended_one_forgotten_first(answered):
    from dsh_cli.core.limits import TASKS_PER_SESSION

    url = answered
    session = Wire2025(url)
    ids = [session.request("tools/call", ask_call({}))["result"]["task"]["taskId"]
           for _ in range(TASKS_PER_SESSION)]
    for task_id in ids:
        session.request("tasks/result", {"taskId": task_id})
    newest = session.request("tools/call", ask_call({}))["result"]["task"]["taskId"]
    listed = [task["taskId"] for task in session.request("tasks/list", {})["result"]["tasks"]]
    assert listed == [*ids[1:], newest]
    assert session.request("tasks/get", {"taskId": ids[0]})["error"]["code"] == NOT_FOUND


def test_with_32_tasks_waiting_a_33rd_is_refused(waiting):
    from dsh_cli.core.limits import TASKS_PER_SESSION

    url = waiting
    session = Wire2025(url)
    for _ in range(TASKS_PER_SESSION):
        assert "result" in session.request("tools/call", ask_call({}))
    refused = session.request("tools/call", ask_call({}))["error"]
    assert refused["code"] == -32600 and "too many tasks" in refused["message"]
    other = Wire2025(url)  # the cap is a session's, not the process's
    assert "result" in other.request("tools/call", ask_call({}))


BAD_TASK_IDS = [None, {}, {"taskId": 5}, {"taskId": None}, {"taskId": ["x"]},
                {"taskId": "x" * 100_000}]


def test_bad_task_ids_and_ttls_are_answered_not_crashed_on(answered):
    url = answered
    session, wire = Wire2025(url), Wire2026(url)
    for params in BAD_TASK_IDS:
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert session.request(method, params)["error"]["code"] == NOT_FOUND
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            assert wire.request(method, params or {})["error"]["code"] == NOT_FOUND
    for ttl in ("big", -1, 1.5, True, None):  # not a positive integer: the default hour
        task = session.request("tools/call", ask_call({"ttl": ttl}))["result"]["task"]
        assert task["ttl"] == 60 * 60 * 1000
    for task in ("x", 5, []):  # not an object: the SDK's own params check refuses it
        assert session.request("tools/call", {**ask_call(), "task": task})["error"][
            "code"] == -32602
    # and the server still serves
    assert session.request("tools/call", ask_call(delivery="wait"))["result"][
        "structuredContent"] == ANSWERED


def test_sigterm_with_a_task_waiting_withdraws_it_and_ends_quietly():
    import subprocess

    from harness.dsh_under_test import DSH

    async def main():
        async with jsonl_desk() as desk:
            process = subprocess.Popen([DSH, "mcp", "--http", "--wait", "20"],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            try:
                line = await asyncio.to_thread(process.stderr.readline)
                session = await asyncio.to_thread(Wire2025, line.split()[-1])
                await asyncio.to_thread(session.request, "tools/call", ask_call({}))
                requested = await desk.event("question/requested")
                process.terminate()
                resolved = await desk.event("question/resolved")
                _, err = await asyncio.to_thread(process.communicate, None, 30)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=30)
            return requested, resolved, process.returncode, err

    requested, resolved, status, err = bounded(main())
    assert resolved["rpc_id"] == requested["rpc_id"], resolved
    assert resolved["outcome"] == "aborted", resolved
    assert status == 143 and err == "", err


def test_a_2025_tasks_status_notifications_reach_the_sessions_get_stream(answered):
    """Not the ``tools/call`` response's stream: that one ended with the task's creation."""
    import http.client
    from urllib.parse import urlsplit

    url = answered
    session = Wire2025(url)
    parts = urlsplit(url)
    stream = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    stream.request("GET", parts.path, headers={**session.headers(),
                                               "Accept": "text/event-stream"})
    response = stream.getresponse()
    assert response.status == 200
    created = session.request("tools/call", ask_call({}))["result"]["task"]
    while True:
        line = response.fp.readline()
        assert line, "the stream ended"
        if line.startswith(b"data:") and b"notifications/tasks/status" in line:
            status = json.loads(line[5:])["params"]
            break
    stream.close()
    assert status["taskId"] == created["taskId"] and status["status"] == "completed"
    assert status["ttl"] == created["ttl"]


SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def test_a_2026_listener_hears_of_the_tasks_it_named_and_no_other(desked):
    """Two waiting tasks, a listener on each: the desk's answer reaches only A's listener
    (B's hears first of B's cancel, so A's notice never came before it on that stream)."""
    async def main():
        url, env = desked
        async with jsonl_desk(env=env) as desk:
            wire = Wire2026(url)
            first = (await asyncio.to_thread(wire.request, "tools/call",
                                             ask_call()))["result"]
            asked = await desk.event("question/requested")
            second = (await asyncio.to_thread(wire.request, "tools/call",
                                              ask_call()))["result"]  # queued behind A
            mine = await asyncio.to_thread(Listener, wire, {"taskIds": [first["taskId"]]})
            other = await asyncio.to_thread(
                Listener, wire, {"taskIds": [second["taskId"], "no-such-task"]})
            try:
                acks = [await asyncio.to_thread(listener.next)
                        for listener in (mine, other)]
                await desk.answer(asked, ANSWERED["answers"])
                heard = await asyncio.to_thread(mine.next)
                await asyncio.to_thread(wire.request, "tasks/cancel",
                                        {"taskId": second["taskId"]})
                overheard = await asyncio.to_thread(other.next)
            finally:
                mine.close()
                other.close()
            return first, second, acks, heard, overheard, (mine.id, other.id)

    first, second, acks, heard, overheard, ids = bounded(main())
    assert [ack["method"] for ack in acks] == ["notifications/subscriptions/acknowledged"] * 2
    assert acks[0]["params"] == {"notifications": {"taskIds": [first["taskId"]]},
                                 "_meta": {SUBSCRIPTION_ID: ids[0]}}
    assert acks[1]["params"]["notifications"] == {"taskIds": [second["taskId"]]}
    assert heard["method"] == "notifications/tasks"
    params = heard["params"]
    assert params["taskId"] == first["taskId"] and params["status"] == "completed"
    assert told(params["result"]["structuredContent"]) == ANSWERED
    assert params["_meta"] == {SUBSCRIPTION_ID: ids[0]} and "resultType" not in params
    assert {"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(params)
    assert overheard["method"] == "notifications/tasks"
    assert overheard["params"]["taskId"] == second["taskId"]
    assert overheard["params"]["status"] == "cancelled"


def test_a_2026_listener_opened_after_its_task_ended_still_hears_the_end(answered):
    url = answered
    wire = Wire2026(url)
    created = wire.request("tools/call", ask_call())["result"]
    until_ended(wire.request, created["taskId"])
    listener = Listener(wire, {"taskIds": [created["taskId"]]})
    try:
        ack, heard = listener.next(), listener.next()
    finally:
        listener.close()
    assert ack["params"]["notifications"] == {"taskIds": [created["taskId"]]}
    assert heard["params"]["status"] == "completed"
    assert told(heard["params"]["result"]["structuredContent"]) == ANSWERED


@pytest.mark.parametrize("filter_", [{}, {"taskIds": "one"}, {"taskIds": [1]},
                                     {"taskIds": ["t"] * 33}],
                         ids=["none", "a-string", "not-strings", "too-many"])
def test_a_2026_listen_without_a_good_task_id_filter_is_refused(answered, filter_):
    url = answered
    listener = Listener(Wire2026(url), filter_)
    try:
        refused = listener.next()
    finally:
        listener.close()
    assert refused["error"]["code"] == -32602


def test_a_2026_listen_without_the_extension_is_not_served(answered):
    url = answered
    listener = Listener(Wire2026(url, tasks=False), {"taskIds": ["t"]})
    try:
        refused = listener.next()
    finally:
        listener.close()
    assert refused["error"]["code"] == -32601


def test_sigterm_ends_an_open_listen_stream_with_its_result_and_quietly():
    import subprocess

    from harness.dsh_under_test import DSH

    process = subprocess.Popen([DSH, "mcp", "--http", "--wait", "20"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        wire = Wire2026(process.stderr.readline().split()[-1])
        created = wire.request("tools/call", ask_call())["result"]
        listener = Listener(wire, {"taskIds": [created["taskId"]]})
        listener.next()
        process.terminate()
        last = listener.next()
        _, err = process.communicate(None, 30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert last == {"jsonrpc": "2.0", "id": listener.id,
                    "result": {"_meta": {SUBSCRIPTION_ID: listener.id}}}
    assert process.returncode == 143 and err == "", err
