"""Kill -9 of one of two `dsh hub serve` processes on one PostgreSQL store (issue 47's
first fault): the entry its waiting call held is withdrawn by the other process, and the
agent's async question is fetched by its ticket, and its MCP tasks (of both protocol eras)
by their ids and by `tasks/list`, at the other process, answered once; raw HTTP agents,
and an agent of the official SDK through a `dsh mcp --hub` forwarder behind a proxy
standing in for the load balancer."""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import re
import subprocess
import threading

from harness.dsh_under_test import DSH
from harness.hub_serve import (
    ANSWER,
    BATCH,
    agent,
    agent_token,
    answer_frame,
    bounded,
    pending_entry,
    settled,
)
from harness.tasks_wire import Listener, Wire2025, Wire2026, post
from harness.tcp_proxy import tcp_proxy

from dsh_cli.hub import HubStore
from dsh_cli.hub.records import NotPending

ORPHAN = "2"  # seconds a silent heartbeat is trusted (DSH_HUB_ORPHAN_SECONDS)


@contextlib.asynccontextmanager
async def hub(location: str, replica: str):
    """A real `dsh hub serve`; yields its URL and process (to kill), stopped at the end."""
    process = await asyncio.create_subprocess_exec(
        DSH, "hub", "serve", "--store", location, "--port", "0", "--replica", replica,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "DSH_HUB_ORPHAN_SECONDS": ORPHAN})
    try:
        assert process.stderr is not None
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line.startswith("dsh: hub http://127.0.0.1:"), line
        yield line.split()[-1], process
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


def seen_at(store: HubStore, replica: str) -> float:
    with store.engine.transaction() as tx:
        return float(tx.rows("SELECT seen_at FROM hub_replicas WHERE name = ?",
                             (replica,))[0][0])


async def swept_after(store: HubStore, replica: str, moment: float) -> None:
    """Until ``replica`` has run a whole sweep (beat, then orphans) after ``moment``."""
    while await asyncio.to_thread(seen_at, store, replica) <= moment:
        await asyncio.sleep(0.05)
    beat = await asyncio.to_thread(seen_at, store, replica)
    while await asyncio.to_thread(seen_at, store, replica) <= beat:  # the next: one passed
        await asyncio.sleep(0.05)


class TaskAgent:
    """The issue's raw HTTP agent using MCP tasks: a 2025-11-25 session at one hub process,
    its requests off the event loop (``Wire2025`` blocks)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.wire: Wire2025 | None = None

    async def request(self, method: str, task_id: str | None = None, **params) -> dict:
        if self.wire is None:
            self.wire = await asyncio.to_thread(
                Wire2025, f"{self.url}/mcp", {"Authorization": f"Bearer {self.token}"})
        if task_id is not None:
            params["taskId"] = task_id
        return await asyncio.to_thread(self.wire.request, method, params, 60)

    async def task(self) -> str:
        """A new task-augmented async ask_user_question: its task id."""
        made = await self.request("tools/call", name="ask_user_question",
                                  arguments={**BATCH, "delivery": "async"},
                                  task={"ttl": 600_000})
        return made["result"]["task"]["taskId"]

    async def status(self, task: str) -> str:
        return (await self.request("tasks/get", task))["result"]["status"]


class SessionlessAgent:
    """A raw HTTP agent of the 2026-07-28 wire (the tasks extension, no session) at one hub
    process, its requests off the event loop."""

    def __init__(self, url: str, token: str) -> None:
        self.wire = Wire2026(f"{url}/mcp")
        self.headers = {"Authorization": f"Bearer {token}"}

    async def request(self, method: str, task_id: str | None = None, **params) -> dict:
        if task_id is not None:
            params["taskId"] = task_id
        return await asyncio.to_thread(self.wire.request, method, params, self.headers)

    async def task(self) -> str:
        """A new async ask_user_question, which the server makes a task: its task id."""
        made = (await self.request("tools/call", name="ask_user_question",
                                   arguments={**BATCH, "delivery": "async"}))["result"]
        assert made["resultType"] == "task", made
        return made["taskId"]


def desk_answer(url: str, human: str, entry, answers=ANSWER) -> dict:
    """A human's desk answers ``entry`` through hub ``url``'s /desk: the reply frame."""
    frame = {**answer_frame(entry, answers), "rpc_id": entry.id}
    status, _, replies = post(f"{url}/desk", frame, {"Authorization": f"Bearer {human}"})
    assert status == 200, (status, replies)
    return replies[0]


def test_a_killed_hub_process_leaves_nothing_lost_or_answered_twice(postgres_url):
    """The waiting call's entry is withdrawn; the async ticket and the MCP tasks asked at
    hub one are read, waited on, cancelled and answered at hub two (also while one lives),
    by their agent's token only, each answered once."""
    token = agent_token(postgres_url)
    stranger = agent_token(postgres_url, "other-bot")
    human = agent_token(postgres_url, "alice", "human")
    seen: dict = {}

    async def main():
        with HubStore.open(postgres_url) as store:
            async with hub(postgres_url, "one") as (first, one), \
                    hub(postgres_url, "two") as (second, _):
                tasks_one, tasks_two = TaskAgent(first, token), TaskAgent(second, token)
                made: dict[str, object] = {}  # task id -> its entry
                for _ in range(3):
                    task = await tasks_one.task()
                    made[task] = next(e for e in await pending_entry(store, count=len(made) + 1)
                                      if e not in made.values())
                answered, dropped, abandoned = made
                async with agent(first, token) as at_first:
                    waiting = asyncio.ensure_future(
                        at_first.call_tool("ask_user_question", BATCH))
                    asked = await at_first.call_tool("ask_user_question",
                                                     {**BATCH, "delivery": "async"})
                    ticket = asked.structured_content["ticket"]
                    entries = await pending_entry(store, count=5)
                    [waited] = [e for e in entries if e.batch.get("delivery", "wait") == "wait"]
                    later = await asyncio.to_thread(store.by_key, "ci-bot", ticket)
                    task_entry, abandoned_entry = made[answered], made[abandoned]
                    # a 2026-07-28 agent's tasks at hub one, read at hub two while it lives
                    sessionless_one = SessionlessAgent(first, token)
                    told, dropped_2026 = (await sessionless_one.task(),
                                          await sessionless_one.task())
                    told_entry = await asyncio.to_thread(store.by_key, "ci-bot",
                                                         told.removeprefix("task-"))
                    seen["2026 alive"] = (await SessionlessAgent(second, token).request(
                        "tasks/get", told))["result"]["status"]
                    own = await tasks_two.task()  # hub two's own task, held in its memory
                    approval = (await tasks_two.request(  # a task no ticket names
                        "tools/call", name="approve_tool_use", task={"ttl": 600_000},
                        arguments={"tool_name": "Bash", "input": {"command": "make"},
                                   "tool_use_id": "toolu_1"}))["result"]["task"]["taskId"]
                    seen.update({"told": told, "dropped 2026": dropped_2026, "own": own,
                                 "approval": approval,
                                 "told entry": told_entry, "ticket": ticket,
                                 "made": (answered, dropped, abandoned)})
                    # hub one lives: hub two reads its task, and cancels another of them
                    seen["read alive"] = await tasks_two.status(answered)
                    seen["cancelled alive"] = (await tasks_two.request(
                        "tasks/cancel", dropped))["result"]["status"]
                    while (status := await tasks_one.status(dropped)) == "working":
                        await asyncio.sleep(0.05)
                    seen["the maker agrees"] = status
                    # past the bound, with hub one beating: hub two withdraws nothing
                    await swept_after(store, "two", waited.created_at + float(ORPHAN))
                    alive = await asyncio.to_thread(store.get, waited.id)
                    one.kill()  # SIGKILL: no withdrawal of its own
                    await one.wait()
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(waiting, 30)
                withdrawn = await asyncio.wait_for(settled(store, waited.id), 30)
                still = await asyncio.to_thread(store.get, later.id)
                # the agent is back, at hub two, with a new session
                back, other = TaskAgent(second, token), TaskAgent(second, stranger)
                seen["read after"] = await back.status(answered)
                seen["foreign"] = [(await other.request(method, answered))["error"]
                                   for method in ("tasks/get", "tasks/result", "tasks/cancel")]
                seen["unknown"] = (await back.request("tasks/get", "task-q_0000"))["error"]
                # tasks/list at hub two: its own, and those made at hub one (now dead)
                listed = (await back.request("tasks/list"))["result"]
                seen["listed"] = {task["taskId"]: task["status"] for task in listed["tasks"]}
                seen["listed ttl"] = {task["taskId"]: task["ttl"] for task in listed["tasks"]}
                seen["cursor"] = listed.get("nextCursor")
                seen["listed foreign"] = (await other.request("tasks/list"))["result"]
                seen["bad cursor"] = (await back.request("tasks/list", cursor="x"))["error"]
                # the 2026-07-28 agent is back at hub two
                sessionless, stranger_2026 = (SessionlessAgent(second, token),
                                              SessionlessAgent(second, stranger))
                seen["2026 read after"] = (await sessionless.request("tasks/get", told))["result"]
                seen["2026 unknown"] = (await sessionless.request(
                    "tasks/get", "task-q_0000"))["error"]
                seen["2026 foreign"] = [(await stranger_2026.request(method, told))["error"]
                                        for method in ("tasks/get", "tasks/update",
                                                       "tasks/cancel")]
                seen["2026 update"] = (await sessionless.request("tasks/update", told,
                                                                 inputResponses={}))["result"]
                seen["2026 cancel"] = (await sessionless.request(
                    "tasks/cancel", dropped_2026))["result"]
                seen["2026 cancelled"] = (await sessionless.request(
                    "tasks/get", dropped_2026))["result"]
                # a listen stream at hub two follows to its end the task made at hub one,
                # and hub two's own 2025-11-25 task (the same token's: either wire reads it)
                own_entry = await asyncio.to_thread(store.by_key, "ci-bot",
                                                    own.removeprefix("task-"))
                listener = await asyncio.to_thread(Listener, sessionless.wire,
                                                   {"taskIds": [told, own]},
                                                   sessionless.headers)
                try:
                    seen["ack"] = await asyncio.to_thread(listener.next)
                    seen["2026 desk"] = await asyncio.to_thread(desk_answer, second, human,
                                                                told_entry)
                    seen["own desk"] = await asyncio.to_thread(desk_answer, second, human,
                                                               own_entry)
                    seen["heard"] = [await asyncio.to_thread(listener.next) for _ in range(2)]
                    seen["listen end"] = await asyncio.to_thread(listener.next)
                finally:
                    listener.close()
                seen["own entry"] = own_entry
                seen["2026 answered"] = (await sessionless.request("tasks/get", told))["result"]
                result = asyncio.ensure_future(back.request("tasks/result", answered))
                seen["desk"] = await asyncio.to_thread(desk_answer, second, human, task_entry)
                seen["result"] = (await result)["result"]
                seen["got"] = (await back.request("tasks/get", answered))["result"]
                seen["cancel late"] = (await back.request("tasks/cancel", answered))["error"]
                seen["cancelled after"] = (await back.request(
                    "tasks/cancel", abandoned))["result"]["status"]
                seen["result cancelled"] = (await back.request(
                    "tasks/result", abandoned))["error"]
                seen["desk late"] = await asyncio.to_thread(desk_answer, second, human,
                                                            abandoned_entry)
                async with agent(second, token) as at_second, \
                        agent(second, stranger) as other:
                    before = await at_second.call_tool("get_user_answer", {"ticket": ticket})
                    foreign = await other.call_tool("get_user_answer", {"ticket": ticket})
                    won = await asyncio.to_thread(store.answer, later.id, answer_frame(later),
                                                  "alice")
                    after = await at_second.call_tool("get_user_answer",
                                                      {"ticket": ticket, "wait_seconds": 30})
                    again = await asyncio.to_thread(
                        store.answer, later.id,
                        answer_frame(later, [{"id": "q1", "selected": ["Postgres"]}]), "bob")
                    twice = await at_second.call_tool("get_user_answer", {"ticket": ticket})
                    seen["task twice"] = await asyncio.to_thread(
                        store.answer, task_entry.id, answer_frame(task_entry), "bob")
                audit = await asyncio.to_thread(store.audit)
        return alive, withdrawn, still, before, foreign, won, after, again, twice, audit, \
            waited, later, task_entry

    (alive, withdrawn, still, before, foreign, won, after, again, twice, audit, waited,
     later, task_entry) = bounded(main(), 150)
    assert alive.state == "pending"  # a live process's entry is never taken for an orphan
    assert withdrawn.state == "cancelled" and withdrawn.answer is None
    [cancel] = [row for row in audit if row.entry_id == waited.id and row.action == "cancel"]
    assert (cancel.actor, cancel.replica) == ("hub", "two")
    assert still.state == "pending"  # the async question waits for its human at hub two
    assert before.structured_content["status"] == "pending"
    assert foreign.is_error and foreign.structured_content["error"]["code"] == "UNKNOWN_TICKET"
    assert not isinstance(won, NotPending)
    assert after.structured_content == {"answers": ANSWER}
    assert isinstance(again, NotPending) and again.state == "answered"
    assert twice.structured_content == {"answers": ANSWER}  # the first answer, again
    # the tasks: read and cancelled at hub two while hub one lives, and after it died
    assert (seen["read alive"], seen["cancelled alive"], seen["the maker agrees"]) == (
        "working", "cancelled", "cancelled")
    assert seen["read after"] == "working"
    assert seen["foreign"] == [seen["unknown"]] * 3  # another agent's: as an id never made
    assert seen["desk"]["type"] == "response/ack" and seen["desk"]["accepted"] is True
    assert seen["result"]["isError"] is False
    assert seen["result"]["structuredContent"]["answers"] == ANSWER
    assert seen["got"]["status"] == "completed"
    assert seen["cancel late"]["message"] == "Cannot cancel task: already completed"
    assert seen["cancelled after"] == "cancelled"
    assert seen["result cancelled"]["code"] == -32602
    assert (seen["desk late"]["accepted"], seen["desk late"]["reason"]) == (False, "not-pending")
    assert isinstance(seen["task twice"], NotPending)
    # tasks/list at hub two names the agent's tasks of both processes and eras, the async
    # ticket's too (any async question is a task by its ticket at the hub), its own only
    answered, dropped, abandoned = seen["made"]
    assert seen["listed"] == {
        answered: "working", dropped: "cancelled", abandoned: "working",
        "task-" + seen["ticket"]: "working", seen["told"]: "working",
        seen["dropped 2026"]: "working", seen["own"]: "working", seen["approval"]: "working"}
    assert next(iter(seen["listed"])) == seen["approval"]  # this process's, first
    assert seen["listed ttl"][seen["own"]] == 600_000  # hub two holds it: its own timer
    assert seen["listed ttl"][answered] is None  # read from the store: kept as its entry
    assert seen["cursor"] is None
    assert seen["listed foreign"] == {"tasks": []}
    assert seen["bad cursor"]["code"] == -32602
    # the 2026-07-28 tasks: read at hub two while hub one lives and after it died, by
    # their agent's token only, cancelled and answered there
    assert seen["2026 alive"] == "working"
    assert (seen["2026 read after"]["status"], seen["2026 read after"]["ttlMs"]) == (
        "working", None)
    assert seen["2026 foreign"] == [seen["2026 unknown"]] * 3
    assert seen["2026 unknown"]["code"] == -32602
    assert seen["2026 update"]["resultType"] == seen["2026 cancel"]["resultType"] == "complete"
    assert seen["2026 cancelled"]["status"] == "cancelled"
    assert seen["2026 desk"]["accepted"] is True
    assert seen["own desk"]["accepted"] is True
    assert seen["ack"]["params"]["notifications"]["taskIds"] == [seen["told"], seen["own"]]
    assert {heard["method"] for heard in seen["heard"]} == {"notifications/tasks"}
    assert sorted((heard["params"]["taskId"], heard["params"]["status"])
                  for heard in seen["heard"]) == sorted([(seen["told"], "completed"),
                                                         (seen["own"], "completed")])
    assert [heard["params"]["result"]["structuredContent"]["answers"]
            for heard in seen["heard"]] == [ANSWER, ANSWER]
    assert "result" in seen["listen end"]  # the stream ends once the task it named did
    assert seen["2026 answered"]["status"] == "completed"
    assert seen["2026 answered"]["result"]["structuredContent"]["answers"] == ANSWER
    answers = [row for row in audit if row.action == "answer"]
    assert sorted((row.entry_id, row.actor) for row in answers) == sorted(
        [(later.id, "alice"), (task_entry.id, "alice"), (seen["told entry"].id, "alice"),
         (seen["own entry"].id, "alice")])


CEILING = 60.0  # a forwarder that never says its line fails the test instead of hanging it


class StderrLines:
    """A child's stderr through a pipe a thread reads: each line, waited for."""

    def __init__(self) -> None:
        read_end, write_end = os.pipe()
        self.errlog = os.fdopen(write_end, "w")  # the child's stderr
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(os.fdopen(read_end),), daemon=True).start()

    def _read(self, stream) -> None:
        with stream:
            for line in stream:
                self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def until(self, words: str) -> str:
        """The first line from now on that holds ``words``."""
        while (line := self._lines.get(timeout=CEILING)) is not None:
            self.seen.append(line)
            if words in line:
                return line
        raise AssertionError(f"the child ended before saying {words!r}; said {self.seen}")


@contextlib.asynccontextmanager
async def forwarding_agent(url: str, token: str):
    """The official SDK's client over stdio to a real `dsh mcp --hub URL`; yields the
    client and the forwarder's stderr lines."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.types import Implementation

    stderr = StderrLines()
    params = StdioServerParameters(command=DSH, args=["mcp", "--hub", url],
                                   env={**os.environ, "DSH_HUB_TOKEN": token})
    try:
        async with Client(stdio_client(params, errlog=stderr.errlog), mode="legacy",
                          client_info=Implementation(name="fwd-agent", version="1")) as client:
            yield client, stderr
    finally:
        stderr.errlog.close()


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_a_forwarder_whose_hub_process_is_killed_reaches_the_other_one(postgres_url):
    """Behind a proxy (the balancer): hub one is killed -9 with a waiting call and an async
    question in flight; the waiting call ends with the drop error, the forwarder says it
    lost the hub and, once the proxy sends to hub two, that it is back; the ticket is
    fetched there and answered at hub two's /desk, once; a second answer is refused."""
    from mcp.shared.exceptions import MCPError

    token = agent_token(postgres_url)
    human = agent_token(postgres_url, "alice", "human")
    seen: dict = {}

    async def main():
        with HubStore.open(postgres_url) as store:
            async with hub(postgres_url, "one") as (first, one), \
                    hub(postgres_url, "two") as (second, _), \
                    tcp_proxy(port_of(first)) as proxy, \
                    forwarding_agent(f"http://127.0.0.1:{proxy.port}", token) as (mcp, err):
                asked = await mcp.call_tool("ask_user_question", {**BATCH, "delivery": "async"})
                ticket = asked.structured_content["ticket"]
                waiting = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                entries = await pending_entry(store, count=2)
                [waited] = [e for e in entries if e.batch.get("delivery", "wait") == "wait"]
                later = await asyncio.to_thread(store.by_key, "ci-bot", ticket)
                one.kill()  # SIGKILL: its connections close, the proxy's with them
                await one.wait()
                seen["lost"] = await asyncio.to_thread(err.until, "lost the hub")
                try:
                    seen["waiting"] = await asyncio.wait_for(waiting, CEILING)
                except MCPError as error:
                    seen["waiting"] = error
                # the forwarder tries again while the balancer still sends to hub one
                try:
                    await asyncio.wait_for(proxy.refusals(proxy.refused + 3), CEILING)
                except TimeoutError:
                    raise AssertionError(f"the forwarder stopped trying: {err.seen}") from None
                # the balancer finds hub one dead: new connections go to hub two
                proxy.switch(port_of(second))
                proxy.drop()
                seen["back"] = await asyncio.to_thread(err.until, "is back")
                seen["withdrawn"] = await asyncio.wait_for(settled(store, waited.id), CEILING)
                seen["before"] = await mcp.call_tool("get_user_answer", {"ticket": ticket})
                fetched = asyncio.ensure_future(mcp.call_tool(
                    "get_user_answer", {"ticket": ticket, "wait_seconds": 30}))
                seen["desk"] = await asyncio.to_thread(desk_answer, second, human, later)
                seen["after"] = await asyncio.wait_for(fetched, CEILING)
                seen["desk again"] = await asyncio.to_thread(
                    desk_answer, second, human, later,
                    [{"id": "q1", "selected": ["Postgres"]}])
                seen["again"] = await asyncio.to_thread(
                    store.answer, later.id,
                    answer_frame(later, [{"id": "q1", "selected": ["Postgres"]}]), "bob")
                seen["twice"] = await mcp.call_tool("get_user_answer", {"ticket": ticket})
                seen["audit"] = await asyncio.to_thread(store.audit)
                seen["proxy"] = proxy.port
            seen["said"] = err.seen
        return waited, later

    waited, later = bounded(main(), 150)
    assert "reconnecting with back-off" in seen["lost"]
    assert f"http://127.0.0.1:{seen['proxy']}/mcp" in seen["lost"]  # the balancer's
    # the waiting call is told at once, not left hanging, and how to go on
    assert isinstance(seen["waiting"], MCPError), seen["waiting"]
    assert "dropped while this request was in flight" in str(seen["waiting"])
    assert "fetch an async ticket" in str(seen["waiting"])
    # back once the balancer sends to hub two, after attempts that found hub one gone
    assert "a new MCP session" in seen["back"]
    attempts = re.search(r"after (\d+) attempts", seen["back"])
    assert attempts is not None and int(attempts[1]) >= 2, seen["back"]
    # its entry: withdrawn by hub two, as its asker is dead
    assert seen["withdrawn"].state == "cancelled" and seen["withdrawn"].answer is None
    [cancel] = [row for row in seen["audit"]
                if row.entry_id == waited.id and row.action == "cancel"]
    assert (cancel.actor, cancel.replica) == ("hub", "two")
    # the async question: still pending at hub two, answered there, delivered once
    assert seen["before"].structured_content["status"] == "pending"
    assert seen["desk"]["type"] == "response/ack" and seen["desk"]["accepted"] is True
    assert seen["after"].structured_content == {"answers": ANSWER}
    assert (seen["desk again"]["accepted"], seen["desk again"]["reason"]) == (
        False, "not-pending")
    assert isinstance(seen["again"], NotPending) and seen["again"].state == "answered"
    assert seen["twice"].structured_content == {"answers": ANSWER}  # the first, again
    [answer] = [row for row in seen["audit"] if row.action == "answer"]
    assert (answer.entry_id, answer.actor, answer.replica) == (later.id, "alice", "two")
    assert not any("Traceback" in line for line in seen["said"])


def test_the_sweep_withdraws_only_the_waited_entries_of_a_silent_process(tmp_path):
    """On the store's clock: a process silent past the bound loses the entries its calls
    waited on (cancel, by hub); its async entries, and a live process's, stay pending."""
    location = str(tmp_path / "hub.db")
    now = [1000.0]
    with HubStore.open(location, replica="dead", clock=lambda: now[0]) as dead, \
            HubStore.open(location, replica="live", clock=lambda: now[0]) as live:
        dead.beat()
        live.beat()
        ask = {"token": "ci-bot", "batch": BATCH, "agent": "a", "machine": "m", "cwd": "/"}
        orphan = dead.ask(**ask, waited=True)
        fetched_later = dead.ask(**ask, key="q_1")
        kept = live.ask(**ask, waited=True)
        now[0] += 5
        live.beat()
        assert live.withdraw_orphans(10) == []  # within the bound: nothing
        now[0] += 6
        live.beat()
        assert live.withdraw_orphans(10) == [orphan.id]
        assert live.withdraw_orphans(10) == []  # once
        states = {e.id: e.state for e in (live.get(i) for i in
                                          (orphan.id, fetched_later.id, kept.id)) if e}
        [cancel] = [row for row in live.audit(orphan.id) if row.action == "cancel"]
    assert states == {orphan.id: "cancelled", fetched_later.id: "pending", kept.id: "pending"}
    assert (cancel.actor, cancel.replica) == ("hub", "live")


def test_a_ticket_read_from_the_store_ends_as_the_asking_process_would_have(tmp_path):
    """The stored outcomes through the asking process's own code: the answer, a dismissal
    (ASK_CANCELLED), a timeout (ASK_TIMEOUT), an agent's withdrawal (ASK_ABORTED)."""
    import json

    from dsh_cli.hub.asker import stored_outcome
    from dsh_cli.mcp_server.get_user_answer import outcome_result

    now = [1000.0]
    with HubStore.open(str(tmp_path / "hub.db"), clock=lambda: now[0]) as store:
        ask = {"token": "ci-bot", "batch": {**BATCH, "delivery": "async"}, "agent": "a",
               "machine": "m", "cwd": "/"}
        answered, dismissed, timed, withdrawn = (store.ask(**ask, key=f"q_{n}", timeout=60)
                                                 for n in range(4))
        store.answer(answered.id, answer_frame(answered), "alice")
        store.answer(dismissed.id, {"type": "question/cancel"}, "alice")
        store.cancel(withdrawn.id, "ci-bot")
        now[0] += 61
        store.expire()

        async def result(entry):  # on a loop, as get_user_answer reads it
            got = outcome_result(stored_outcome(store.get(entry.id), f"q_{entry.id}"))
            return json.loads(got.content)

        results = [asyncio.run(result(e)) for e in (answered, dismissed, timed, withdrawn)]
    assert results[0] == {"answers": ANSWER}
    assert [r["error"]["code"] for r in results[1:]] == ["ASK_CANCELLED", "ASK_TIMEOUT",
                                                         "ASK_ABORTED"]


def test_a_task_read_from_the_store_stands_as_its_entry(tmp_path):
    """``HubTasks`` at a process that does not hold the task: the entry's state as the
    task's status (the answer, a dismissal, a timeout: completed; withdrawn: cancelled;
    pending: working), for its agent's token only; a cancel is the store's, once."""
    from dsh_cli.hub.context import HubContext
    from dsh_cli.hub.tasks import HubTasks, task_id_of
    from dsh_cli.hub.watch import HubWatch
    from dsh_cli.mcp_server.tasks.wire_2025_11_25 import task_wire

    now = [1000.0]
    with HubStore.open(str(tmp_path / "hub.db"), clock=lambda: now[0]) as store:
        ask = {"token": "ci-bot", "batch": {**BATCH, "delivery": "async"}, "agent": "a",
               "machine": "m", "cwd": "/"}
        answered, dismissed, _timed, withdrawn, pending = (
            store.ask(**ask, key=f"q_{n}", timeout=60 if n == 2 else None) for n in range(5))
        store.ask(**{**ask, "batch": BATCH}, key="q_5")  # a waited question: no task
        store.answer(answered.id, answer_frame(answered), "alice")
        store.answer(dismissed.id, {"type": "question/cancel"}, "alice")
        store.cancel(withdrawn.id, "ci-bot")
        now[0] += 61
        store.expire()
        tasks = HubTasks(HubContext(store, HubWatch(store)))

        async def main():
            found = [await tasks.find("agent:ci-bot", task_id_of(f"q_{n}")) for n in range(5)]
            unseen = [await tasks.find(owner, task_id)
                      for owner, task_id in [("agent:other-bot", task_id_of("q_0")),
                                             ("agent:ci-bot", "q_0"),
                                             ("agent:ci-bot", task_id_of("q_5")),
                                             ("agent:ci-bot", task_id_of("q_" + "0" * 70)),
                                             ("sessionless", task_id_of("q_0"))]]
            wires = [task_wire(record) for record in found]
            cancelled = await tasks.cancel_found(found[4])
            again = await tasks.cancel_found(await tasks.find("agent:ci-bot",
                                                              task_id_of("q_4")))
            return found, unseen, wires, cancelled, again

        found, unseen, wires, cancelled, again = asyncio.run(main())
        kept = store.get(pending.id)
        [cancel] = [row for row in store.audit(pending.id) if row.action == "cancel"]
    assert [wire["status"] for wire in wires] == ["completed", "completed", "completed",
                                                  "cancelled", "working"]
    results = [record.outcome.result().result for record in found[:3]]
    assert results[0]["isError"] is False and results[0]["structuredContent"]["answers"] == ANSWER
    assert [r["structuredContent"]["error"]["code"] for r in results[1:]] == [
        "ASK_CANCELLED", "ASK_TIMEOUT"]
    assert wires[4]["ttl"] is None  # kept as its entry is, not by a timer of this process
    assert unseen == [None] * 5
    assert (cancelled, again) == (True, False)
    assert kept.state == "cancelled" and cancel.actor == "ci-bot"


def test_an_agents_tasks_are_listed_from_the_store_a_page_at_a_time(tmp_path):
    """``HubTasks``' ``tasks/list`` of an agent token: its async questions in the store, in
    key order, a page at a time behind an opaque cursor; no other token's, no waited
    question; a cursor that is none of the hub's is -32602."""
    from mcp.shared.exceptions import MCPError

    from dsh_cli.hub.context import HubContext
    from dsh_cli.hub.tasks import HubTasks, task_id_of
    from dsh_cli.hub.watch import HubWatch
    from dsh_cli.mcp_server.tasks.wire_2025_11_25 import task_wire

    with HubStore.open(str(tmp_path / "hub.db")) as store:
        ask = {"token": "ci-bot", "batch": {**BATCH, "delivery": "async"}, "agent": "a",
               "machine": "m", "cwd": "/"}
        answered, withdrawn, *_ = (store.ask(**ask, key=f"q_{n}") for n in range(5))
        store.answer(answered.id, answer_frame(answered), "alice")
        store.cancel(withdrawn.id, "ci-bot")
        store.ask(**{**ask, "batch": BATCH}, key="q_2w", waited=True)  # waited: no task
        store.ask(**{**ask, "batch": BATCH}, waited=True)
        store.ask(**{**ask, "token": "other-bot"}, key="q_1x")
        tasks = HubTasks(HubContext(store, HubWatch(store)), page=2)

        async def main():
            pages, cursor = [], None
            while True:
                records, cursor = await tasks.listed("agent:ci-bot", cursor)
                pages.append([task_wire(record) for record in records])
                if cursor is None:
                    break
            refused = []
            for bad in ("x", "cV8w*", 7, "Y2FmZQ==" * 40):
                try:
                    await tasks.listed("agent:ci-bot", bad)
                except MCPError as error:
                    refused.append(error.error.code)
            other = await tasks.listed("agent:other-bot", None)
            return pages, refused, [record.id for record in other[0]]

        pages, refused, other = asyncio.run(main())
        with store.engine.transaction() as tx:  # one range of the (token, ask_key) index
            plan = str(tx.rows("EXPLAIN QUERY PLAN SELECT id FROM hub_entries WHERE token = ? "
                               "AND ask_key > ? AND kind = 'question' AND waiter IS NULL "
                               "ORDER BY ask_key LIMIT ?", ("ci-bot", "", 3)))
    assert "USING INDEX hub_entries_by_key (token=? AND ask_key>?)" in plan, plan
    assert [[task["taskId"] for task in page] for page in pages] == [
        [task_id_of("q_0"), task_id_of("q_1")], [task_id_of("q_2"), task_id_of("q_3")],
        [task_id_of("q_4")]]
    assert [task["status"] for page in pages for task in page] == [
        "completed", "cancelled", "working", "working", "working"]
    assert {task["ttl"] for page in pages for task in page} == {None}
    assert refused == [-32602] * 4
    assert other == [task_id_of("q_1x")]
