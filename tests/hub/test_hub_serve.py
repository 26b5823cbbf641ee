"""`dsh hub serve`, run as the real dsh: agents ask at /mcp with their tokens (the SDK's
Streamable HTTP client), a desk's settling frame written into the store answers them."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import urllib.request
from urllib.error import HTTPError

import pytest
from harness.dsh_under_test import DSH
from harness.hub_serve import (
    ANSWER,
    BATCH,
    agent,
    agent_token,
    answer_frame,
    bounded,
    hub_process,
    settled,
)
from harness.shared_hub import own_pending, serving

from dsh_cli.hub import HubStore

# Where the hub process is incidental, the tests share one per store (each names its own
# tokens and reads only its own entries); a test about the process itself starts its own.


@pytest.fixture
def sqlite_location(tmp_path):
    return str(tmp_path / "hub.db")


@pytest.fixture(scope="module")
def sqlite_hub(tmp_path_factory):
    """One `dsh hub serve` on a SQLite store for this module: (the store, its URL)."""
    where = tmp_path_factory.mktemp("hub")
    location = str(where / "hub.db")
    with serving(location, where) as url:
        yield location, url


@pytest.fixture(scope="module")
def postgres_hubs(postgres_cluster, tmp_path_factory):
    """Two `dsh hub serve` processes on one PostgreSQL store: (the store, one's URL, two's)."""
    location = postgres_cluster.create_schema()
    where = tmp_path_factory.mktemp("hubs")
    with serving(location, where, "--replica", "one") as one, \
            serving(location, where, "--replica", "two") as two:
        yield location, one, two


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_hub(request):
    """A module's hub process: on a SQLite file, then on PostgreSQL (store, URL)."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_hub")
    location, one, _ = request.getfixturevalue("postgres_hubs")
    return location, one


def test_an_agent_asks_at_the_hub_and_gets_the_answer_a_desk_stored(shared_hub):
    location, url = shared_hub
    token = agent_token(location, "asker")

    async def main():
        with HubStore.open(location) as store:
            async with agent(url, token, agent="Claude Code", machine="ci-7",
                             cwd="/home/ci/wörk\x1b[2J") as client:
                call = asyncio.ensure_future(client.call_tool("ask_user_question", BATCH))
                [entry] = await own_pending(store, "asker")
                answered = await asyncio.to_thread(store.answer, entry.id,
                                                   answer_frame(entry), "alice")
                result = await asyncio.wait_for(call, 30)
                return entry, answered, result

    entry, answered, result = bounded(main())
    assert result.is_error is False
    assert result.structured_content == {"answers": ANSWER}
    assert answered.entry.state == "answered"
    # the entry is the desk's question/requested without rpc_id, age and number, and who asks
    assert entry.batch["type"] == "question/requested"
    assert not {"rpc_id", "age", "number"} & entry.batch.keys()
    assert entry.batch["questions"][0]["question"] == "Which database?"
    assert entry.batch["source"] == {"client": "Claude Code", "machine": "ci-7",
                                     "cwd": "/home/ci/wörk", "token": "asker"}
    assert (entry.token, entry.agent, entry.machine, entry.cwd) == (
        "asker", "Claude Code", "ci-7", "/home/ci/wörk")


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_who_asks_falls_back_to_the_client_name_and_the_peer(sqlite_hub, mode):
    """In either protocol era (2025 sessions, the sessionless 2026-07-28 wire)."""
    location, url = sqlite_hub
    name = f"unnamed-{mode}"
    token = agent_token(location, name)

    async def main():
        with HubStore.open(location) as store:
            async with agent(url, token, mode) as client:
                call = asyncio.ensure_future(client.call_tool("ask_user_question", BATCH))
                [entry] = await own_pending(store, name)
                await asyncio.to_thread(store.answer, entry.id, answer_frame(entry), "alice")
                await asyncio.wait_for(call, 30)
                return entry

    entry = bounded(main())
    assert entry.batch["source"]["machine"] == "127.0.0.1"
    assert entry.batch["source"]["cwd"] == ""
    assert entry.batch["source"]["client"]  # the SDK client's clientInfo name


def request_status(url: str, authorization: str | None, session: str | None = None) -> tuple:
    body = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            b'"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}')
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    if session is not None:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(f"{url}/mcp", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers.get("mcp-session-id"), response.read()
    except HTTPError as error:
        return error.code, None, error.read()


def test_no_token_a_wrong_one_or_a_humans_is_refused_and_a_session_is_its_openers(
        sqlite_hub):
    location, url = sqlite_hub
    token = agent_token(location, "opener")
    other = agent_token(location, "intruder")
    human = agent_token(location, "refused-human", "human")

    async def main():
        refused = [await asyncio.to_thread(request_status, url, auth) for auth in (
            None, "Bearer dshhub_wrong", f"Bearer {human}", f"Basic {token}")]
        status, session, _ = await asyncio.to_thread(request_status, url, f"Bearer {token}")
        taken = await asyncio.to_thread(request_status, url, f"Bearer {other}", session)
        own = await asyncio.to_thread(request_status, url, f"Bearer {token}", session)
        return refused, status, session, taken, own

    refused, status, session, taken, own = bounded(main())
    for code, _, body in refused:
        assert code == 401
        assert body.count(b"\n") == 1 and b"dsh hub token add" in body
    assert status == 200 and session
    assert taken[0] == 404  # another token's session is as one that does not exist
    assert own[0] != 404  # its opener still reaches it


def test_an_agent_opening_too_many_sessions_has_its_oldest_ended(sqlite_hub):
    from dsh_cli.core.limits import HUB_SESSIONS_PER_AGENT

    location, url = sqlite_hub
    token = agent_token(location, "many-sessions")
    other = agent_token(location, "one-session")

    async def main():
        theirs = (await asyncio.to_thread(request_status, url, f"Bearer {other}"))[1]
        opened = [(await asyncio.to_thread(request_status, url, f"Bearer {token}"))[1]
                  for _ in range(HUB_SESSIONS_PER_AGENT + 1)]
        first = await asyncio.to_thread(request_status, url, f"Bearer {token}", opened[0])
        last = await asyncio.to_thread(request_status, url, f"Bearer {token}", opened[-1])
        kept = await asyncio.to_thread(request_status, url, f"Bearer {other}", theirs)
        return first, last, kept

    first, last, kept = bounded(main())
    assert first[0] == 404  # the agent's oldest was ended to make room
    assert last[0] != 404 and kept[0] != 404  # its newest, and another agent's, are kept


def test_a_call_the_agent_cancels_withdraws_its_entry(sqlite_hub):
    location, url = sqlite_hub
    token = agent_token(location, "canceller")

    async def main():
        with HubStore.open(location) as store:
            async with agent(url, token) as client:
                call = asyncio.ensure_future(client.call_tool("ask_user_question", BATCH))
                [entry] = await own_pending(store, "canceller")
                call.cancel()  # the SDK sends notifications/cancelled
                with contextlib.suppress(asyncio.CancelledError):
                    await call
                done = await settled(store, entry.id)
                late = await asyncio.to_thread(store.answer, entry.id, answer_frame(entry),
                                               "alice")
                return done, late, await asyncio.to_thread(store.audit, entry.id)

    done, late, audit = bounded(main())
    assert done.state == "cancelled"
    assert late.state == "cancelled"  # NotPending: nothing is answered after a withdrawal
    assert [(row.action, row.actor) for row in audit] == [("ask", "canceller"),
                                                         ("cancel", "canceller")]


def test_a_stopped_hub_withdraws_the_entries_its_calls_wait_on(sqlite_location):
    token = agent_token(sqlite_location)

    async def main():
        with HubStore.open(sqlite_location) as store:
            process = await asyncio.create_subprocess_exec(
                DSH, "hub", "serve", "--store", sqlite_location, "--port", "0",
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
            url = line.split()[-1]
            try:
                async with agent(url, token) as client:
                    call = asyncio.ensure_future(client.call_tool("ask_user_question", BATCH))
                    [entry] = await own_pending(store, "ci-bot")
                    process.terminate()
                    status = await process.wait()
                    with contextlib.suppress(Exception):
                        await call
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
            return status, await asyncio.to_thread(store.get, entry.id), \
                await asyncio.to_thread(store.audit, entry.id)

    status, entry, audit = bounded(main())
    assert status == 143
    assert entry.state == "cancelled"
    assert audit[-1].action == "cancel" and audit[-1].actor == "ci-bot"


def test_the_question_timeout_is_the_entrys_deadline_timed_out_by_the_store(sqlite_location):
    token = agent_token(sqlite_location)

    async def main():
        with HubStore.open(sqlite_location) as store:
            async with hub_process(sqlite_location, env={"DSH_QUESTION_TIMEOUT": "1"}) as url, \
                    agent(url, token) as client:
                call = asyncio.ensure_future(client.call_tool("ask_user_question", BATCH))
                [entry] = await own_pending(store, "ci-bot")
                result = await asyncio.wait_for(call, 30)
                return entry, result, await asyncio.to_thread(store.get, entry.id), \
                    await asyncio.to_thread(store.audit, entry.id)

    entry, result, after, audit = bounded(main())
    assert entry.deadline is not None and 0 < entry.deadline - entry.created_at <= 1
    assert result.structured_content["error"]["code"] == "ASK_TIMEOUT"
    assert after.state == "timeout"
    assert [(row.action, row.actor) for row in audit] == [("ask", "ci-bot"),
                                                         ("timeout", "hub")]


def test_approve_tool_use_is_decided_through_the_hub(sqlite_hub):
    location, url = sqlite_hub
    token = agent_token(location, "approver")

    async def main():
        with HubStore.open(location) as store:
            async with agent(url, token, cwd="/srv/app") as client:
                arguments = {"tool_name": "Bash", "input": {"command": "rm -rf build"},
                             "tool_use_id": "toolu_1"}
                call = asyncio.ensure_future(client.call_tool("approve_tool_use", arguments))
                [entry] = await own_pending(store, "approver", "permission")
                await asyncio.to_thread(store.answer, entry.id, {
                    "type": "permission/decision", "decision": "deny", "message": "not now",
                    "session_id": entry.batch.get("session_id")}, "alice")
                return entry, await asyncio.wait_for(call, 30)

    entry, result = bounded(main())
    assert entry.batch["type"] == "permission/requested" and "rpc_id" not in entry.batch
    assert entry.batch["tool"] == "Bash" and entry.batch["call_id"] == "toolu_1"
    assert entry.batch["source"]["cwd"] == "/srv/app"
    assert entry.batch["source"]["token"] == "approver"
    text = result.content[0].text
    assert '"behavior":"deny"' in text and "not now" in text


def test_allowed_for_this_session_holds_for_that_agent_token_only(sqlite_hub):
    location, url = sqlite_hub
    token = agent_token(location, "allowed")
    other = agent_token(location, "not-allowed")
    arguments = {"tool_name": "Bash", "input": {"command": "make test"}}

    async def main():
        with HubStore.open(location) as store:
            async with agent(url, token, agent="Claude Code", cwd="/srv/app") as first, \
                    agent(url, other, agent="Claude Code", cwd="/srv/app") as second:
                call = asyncio.ensure_future(first.call_tool("approve_tool_use", arguments))
                [entry] = await own_pending(store, "allowed", "permission")
                await asyncio.to_thread(store.answer, entry.id, {
                    "type": "permission/decision", "decision": "allow_session",
                    "session_id": entry.batch.get("session_id")}, "alice")
                allowed = await asyncio.wait_for(call, 30)
                again = await first.call_tool("approve_tool_use", arguments)  # no entry
                asked = asyncio.ensure_future(second.call_tool("approve_tool_use", arguments))
                [fresh] = await own_pending(store, "not-allowed", "permission")
                await asyncio.to_thread(store.answer, fresh.id, {
                    "type": "permission/decision", "decision": "deny",
                    "session_id": fresh.batch.get("session_id")}, "alice")
                return allowed, again, fresh, await asyncio.wait_for(asked, 30)

    allowed, again, fresh, denied = bounded(main())
    assert '"behavior":"allow"' in allowed.content[0].text
    assert '"behavior":"allow"' in again.content[0].text
    assert fresh.token == "not-allowed"  # another agent's call is asked afresh
    assert '"behavior":"deny"' in denied.content[0].text


def test_an_async_question_answered_later_reaches_get_user_answer(sqlite_hub):
    location, url = sqlite_hub
    token = agent_token(location, "async-asker")
    other = agent_token(location, "async-stranger")

    async def main():
        with HubStore.open(location) as store:
            async with agent(url, token) as client:
                asked = await client.call_tool("ask_user_question",
                                               {**BATCH, "delivery": "async"})
                ticket = asked.structured_content["ticket"]
                [entry] = await own_pending(store, "async-asker")
                before = await client.call_tool("get_user_answer", {"ticket": ticket})
            async with agent(url, other) as stranger:  # another agent's id reads unknown
                foreign = await stranger.call_tool("get_user_answer", {"ticket": ticket})
            # the same agent token, another MCP session: the ticket is the token's
            async with agent(url, token) as again:
                await asyncio.to_thread(store.answer, entry.id, answer_frame(entry), "alice")
                after = await again.call_tool("get_user_answer",
                                              {"ticket": ticket, "wait_seconds": 30})
            return entry, before, foreign, after

    entry, before, foreign, after = bounded(main())
    assert foreign.is_error and foreign.structured_content["error"]["code"] == "UNKNOWN_TICKET"
    assert entry.batch["delivery"] == "async"
    assert before.structured_content["status"] == "pending"
    assert after.structured_content == {"answers": ANSWER}


def test_plain_http_off_loopback_is_refused_without_insecure_http(sqlite_location):
    done = subprocess.run([DSH, "hub", "serve", "--store", sqlite_location, "--host",
                           "0.0.0.0", "--port", "0"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.startswith("dsh: USAGE: 0.0.0.0 is not a loopback address")
    assert done.stderr.count("\n") == 1 and "--insecure-http" in done.stderr

    async def insecure():  # said so: it serves, on the address asked for
        async with hub_process(sqlite_location, "--host", "0.0.0.0", "--insecure-http",
                               host="0.0.0.0") as url:
            return url

    assert bounded(insecure()).startswith("http://0.0.0.0:")


def test_an_ask_at_one_hub_process_is_answered_through_the_store_of_both(postgres_hubs):
    """Two hub processes on one PostgreSQL: the answer is written as the other process's
    desk would; the process holding the call hears it (NOTIFY) and returns it."""
    location, first, second = postgres_hubs
    token = agent_token(location, "at-both")

    async def main():
        with HubStore.open(location) as store:
            async with agent(first, token) as at_first, agent(second, token) as at_second:
                one = asyncio.ensure_future(at_first.call_tool("ask_user_question", BATCH))
                two = asyncio.ensure_future(at_second.call_tool(
                    "ask_user_question", {**BATCH, "questions": [
                        {**BATCH["questions"][0], "header": "Second"}]}))
                entries = await own_pending(store, "at-both", count=2)
                by_header = {e.batch["questions"][0]["header"]: e for e in entries}
                await asyncio.to_thread(store.answer, by_header["DB"].id,
                                        answer_frame(by_header["DB"]), "alice")
                await asyncio.to_thread(store.answer, by_header["Second"].id, answer_frame(
                    by_header["Second"], [{"id": "q1", "selected": ["Postgres"]}]), "bob")
                return await asyncio.wait_for(one, 30), await asyncio.wait_for(two, 30), \
                    await asyncio.to_thread(store.audit)

    one, two, audit = bounded(main())
    assert one.structured_content == {"answers": ANSWER}
    assert two.structured_content == {"answers": [{"id": "q1", "selected": ["Postgres"]}]}
    assert {row.replica for row in audit
            if row.action == "ask" and row.actor == "at-both"} == {"one", "two"}


def test_a_sqlite_hub_hears_a_commit_made_by_another_process(sqlite_location):
    """SQLite has no NOTIFY: another process's commit is noticed (data_version) and heard
    as 'missed, re-read' within the listener's wait."""
    with HubStore.open(sqlite_location) as store:
        listener = store.listen()
        try:
            assert listener.wait(0.01).missed is False
            subprocess.run([DSH, "hub", "token", "add", "bob", "--human", "--store",
                            sqlite_location], check=True, capture_output=True, timeout=60)
            assert listener.wait(0.01).missed is True
            assert listener.wait(0.01).missed is False  # told once
        finally:
            listener.close()
