"""A team answers, end to end with the real programs: ``dsh hub serve`` processes on one store
with routes, agents asking through ``dsh mcp --hub`` forwarders (raw JSON-RPC on stdio) and the
MCP SDK over HTTP (async tickets), humans answering at ``dsh attach --hub --jsonl`` desks, and
``dsh history --hub`` reading the audit. On PostgreSQL with two hub processes, each party at a
different one where it can be; on SQLite with the one hub process it is for.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from harness.chromium import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from harness.dsh_under_test import DSH
from harness.hub_desk import wait_until
from harness.hub_serve import DshChild, agent, agent_token
from harness.jsonl_controller import Controller
from harness.shared_hub import serving
from harness.tasks_wire import Wire2025, ask_call

from dsh_cli.hub import HubStore

CEILING = 60.0  # a stuck party fails the test instead of hanging the suite

QUESTION = {"id": "q", "header": "Deploy", "question": "Deploy now?",
            "options": [{"label": "yes"}, {"label": "no"}]}


def _batch(header: str) -> dict[str, Any]:
    return {"questions": [{**QUESTION, "header": header}]}


class StdioAgent:
    """``dsh mcp --hub URL`` as an agent runs it: raw JSON-RPC lines, its token in the env."""

    def __init__(self, url: str, token: str, cwd: Path, name: str) -> None:
        env = {**os.environ, "DSH_HUB_TOKEN": token}
        self.process = subprocess.Popen([DSH, "mcp", "--hub", url], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, env=env, cwd=cwd)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}})
        assert "result" in self.reply(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def ask(self, rpc_id: int, batch: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call",
                   "params": {"name": "ask_user_question", "arguments": batch}})

    def reply(self, rpc_id: int) -> dict[str, Any]:
        """The response to ``rpc_id`` (the hub's other messages skipped)."""
        while (line := self.lines.get(timeout=CEILING)) is not None:
            message = json.loads(line)
            if message.get("id") == rpc_id and "method" not in message:
                return message
        raise AssertionError(f"the forwarder ended before the reply to {rpc_id}")

    def close(self) -> int:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
        return self.process.wait(timeout=CEILING)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    stop = kill


def _seen(desk: Controller, test, what: str) -> dict:
    """The first event, already read or still to come (within ``CEILING``: a desk may rightly
    be silent longer than one line's wait while agents start), that passes ``test``."""
    for event in desk.events:
        if test(event):
            return event
    deadline = time.monotonic() + CEILING
    while True:
        try:
            event = desk.next()
        except queue.Empty:
            assert time.monotonic() < deadline, f"no {what} within {CEILING} s: {desk.events}"
            continue
        if event is None:
            raise AssertionError(f"the desk ended before {what}: {desk.events}\n"
                                 f"{desk.stderr()}")
        if test(event):
            return event


def _listed(desk: Controller, header: str) -> dict:
    return _seen(desk, lambda e: e["type"] == "question/requested"
                 and e["questions"][0]["header"] == header, f"{header} listed")


def _answer(listed: dict, label: str) -> dict:
    return {"type": "question/answer", "rpc_id": listed["rpc_id"],
            "session_id": listed["session_id"], "answers": [{"id": "q", "selected": [label]}]}


def _ack(desk: Controller, entry_id: str) -> dict:
    return _seen(desk, lambda e: e["type"] == "response/ack" and e["rpc_id"] == entry_id,
                 f"the ack of {entry_id}")


def _history(url: str, token: str) -> list[dict]:
    env = {**os.environ, "DSH_HUB_TOKEN": token}
    done = subprocess.run([DSH, "history", "--hub", url, "--json"], capture_output=True,
                          text=True, env=env, timeout=CEILING)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@dataclass
class Hubs:
    """Where a test's parties go: the store, hub process one's URL and two's (the same on
    SQLite), and the directory under which its agents work (which the routes name)."""

    location: str
    one: str
    two: str
    srv: Path


def _routes(srv: Path, default: str | None, **teams: str) -> str:
    """A hub config: each ``{dir: team}`` a route of the working directories under ``srv/dir``."""
    text = "[hub]\n" + (f'default_team = "{default}"\n' if default else "")
    for where, team in teams.items():
        text += f'\n[[hub.routes]]\ncwd = "{srv / where}/**"\nteam = "{team}"\n'
    return text


@pytest.fixture(scope="module")
def postgres_pair(postgres_cluster, tmp_path_factory):
    """Two hub processes (replicas one and two) on one PostgreSQL store, shared by this
    module's PostgreSQL tests: each test's agents work in directories, and its humans are of
    teams, of its own, so nothing one test leaves is seen by another."""
    srv = tmp_path_factory.mktemp("srv")
    config = srv / "hub.toml"
    config.write_text(_routes(srv, "ops", payments="payments", phone="phone-payments",
                              phone_web="phone-ops", tasks="tasks"))
    location = postgres_cluster.create_schema()
    with serving(location, srv, "--config", str(config), "--replica", "one") as one, \
            serving(location, srv, "--config", str(config), "--replica", "two") as two:
        yield Hubs(location, one, two, srv)


@pytest.fixture
def sqlite_hub(tmp_path):
    """One hub process on a SQLite store (a SQLite store is for one hub process), no default
    team: what no route takes is unteamed, every human's."""
    srv = tmp_path / "srv"
    srv.mkdir()
    config = tmp_path / "hub.toml"
    config.write_text(_routes(srv, None, payments="payments"))
    location = str(tmp_path / "hub.db")
    with serving(location, tmp_path, "--config", str(config), "--replica", "one") as one:
        yield Hubs(location, one, one, srv)


@pytest.mark.parametrize("engine", ["postgresql", "sqlite"])
def test_a_team_answers_across_hub_processes_each_human_seeing_their_teams_entries(
        engine, monkeypatch, request):
    hubs = request.getfixturevalue("postgres_pair" if engine == "postgresql" else "sqlite_hub")
    location, one, two = hubs.location, hubs.one, hubs.two
    payments = hubs.srv / "payments"
    (payments / "api").mkdir(parents=True, exist_ok=True)
    web = hubs.srv / "web"  # routed by none: the default team (ops), or on SQLite none
    web.mkdir(exist_ok=True)
    two_processes = engine == "postgresql"  # a SQLite store is for one hub process
    tokens = {name: agent_token(location, name) for name in ("fwd-a", "fwd-b", "sdk-c")}
    tokens |= {name: agent_token(location, name, "human", team) for name, team in (
        ("alice", "payments"), ("carol", "payments"), ("bob", "ops"))}

    def desk(url: str, who: str) -> Controller:
        monkeypatch.setenv("DSH_HUB_TOKEN", tokens[who])
        return Controller("attach", "--hub", url, "--jsonl")

    async def main() -> dict[str, Any]:
        alice, bob, carol = desk(one, "alice"), desk(two, "bob"), desk(two, "carol")
        forward_a = await asyncio.to_thread(StdioAgent, two, tokens["fwd-a"],
                                            payments / "api", "claude-a")
        forward_b = await asyncio.to_thread(StdioAgent, one, tokens["fwd-b"], web,
                                            "claude-b")
        try:
            async with agent(one, tokens["sdk-c"], agent="sdk-c", machine="runner-9",
                             cwd=f"{payments}/cli") as sdk:
                forward_a.ask(1, _batch("A"))
                asked = await sdk.call_tool("ask_user_question",
                                            {**_batch("C"), "delivery": "async"})
                ticket = asked.structured_content["ticket"]
                forward_b.ask(1, _batch("B"))
                seen = await asyncio.to_thread(_the_humans_answer, alice, bob, carol,
                                               forward_a, forward_b, two, tokens,
                                               unteamed_b=not two_processes)
                seen["c"] = await sdk.call_tool("get_user_answer",
                                                {"ticket": ticket, "wait_seconds": 30})
            # each human's history read at the hub process their desk is not at
            seen["history"] = {who: await asyncio.to_thread(_history, url, tokens[who])
                               for who, url in (("alice", two), ("bob", one))}
            seen["finished"] = [await asyncio.to_thread(party.finish) for party in (
                alice, bob, carol)] + [await asyncio.to_thread(party.close) for party in (
                    forward_a, forward_b)]
            return seen
        finally:
            for party in (alice, bob, carol, forward_a, forward_b):
                party.kill()

    seen = asyncio.run(asyncio.wait_for(main(), 4 * CEILING))
    listed = seen["listed"]
    # each agent's name, machine and working directory reach the desk
    assert listed["A"]["source"] == {"client": "claude-a", "machine": os.uname().nodename,
                                     "cwd": str(payments / "api"), "token": "fwd-a"}
    assert listed["C"]["source"] == {"client": "sdk-c", "machine": "runner-9",
                                     "cwd": f"{payments}/cli", "token": "sdk-c"}
    assert listed["B"]["source"]["cwd"] == str(web)
    # each human sees their own team's entries only, and alice's claim is hers at carol's desk
    payments_saw = {"A", "C"} if two_processes else {"A", "B", "C"}  # B: ops, or no team
    assert seen["alice_saw"] == seen["carol_saw"] == payments_saw
    assert seen["bob_saw"] == {"B"}
    assert (seen["taken"]["taken"], seen["taken"]["taken_by"]) == (True, "alice")
    # the answers reach the agents that asked, whichever process holds their calls
    answers = {"A": seen["a"]["result"]["structuredContent"],
               "B": seen["b"]["result"]["structuredContent"],
               "C": seen["c"].structured_content}
    assert answers == {"A": {"answers": [{"id": "q", "selected": ["yes"]}]},
                       "B": {"answers": [{"id": "q", "selected": ["no"]}]},
                       "C": {"answers": [{"id": "q", "selected": ["no"]}]}}
    assert (seen["again"]["accepted"], seen["again"]["reason"]) == (False, "not-pending")
    # the audit: who did each step and through which hub process; bob reads none of it
    a_id = listed["A"]["rpc_id"]
    steps = [(s["action"], s["actor"], s["replica"]) for s in seen["history"]["alice"]
             if s["entry"]["id"] == a_id]
    assert steps == [("ask", "fwd-a", "two" if two_processes else "one"),
                     ("claim", "alice", "one"), ("answer", "alice", "one")]
    teams = {s["entry"]["id"]: s["entry"]["team"] for s in seen["history"]["alice"]}
    assert teams == {a_id: "payments", listed["C"]["rpc_id"]: "payments"} | (
        {} if two_processes else {listed["B"]["rpc_id"]: None})
    assert {s["entry"]["id"] for s in seen["history"]["bob"]} == {listed["B"]["rpc_id"]}
    assert seen["finished"] == [0] * 5
    with HubStore.open(location) as store:  # this test's: another's may share the store
        assert [e for e in store.pending() if e.token in tokens] == []


def _the_humans_answer(alice: Controller, bob: Controller, carol: Controller,
                       forward_a: StdioAgent, forward_b: StdioAgent, two: str,
                       tokens: dict[str, str], *, unteamed_b: bool) -> dict[str, Any]:
    """Alice takes A and answers A and C; bob answers B; carol's late answer to A loses."""
    listed = {"A": _listed(alice, "A"), "C": _listed(alice, "C"), "B": _listed(bob, "B")}
    for desk, header in [(carol, "A"), (carol, "C")] + (
            [(alice, "B"), (carol, "B")] if unteamed_b else []):
        _listed(desk, header)
    a_id = listed["A"]["rpc_id"]
    alice.send({"type": "desk/opened", "rpc_id": a_id})
    taken = _seen(carol, lambda e: e["type"] == "inbox/changed" and e["change"] == "taken"
                  and e["entry"]["rpc_id"] == a_id, "alice's claim of A")["entry"]
    alice.send(_answer(listed["A"], "yes"))
    assert _ack(alice, a_id)["accepted"] is True
    a = forward_a.reply(1)
    alice.send(_answer(listed["C"], "no"))
    assert _ack(alice, listed["C"]["rpc_id"])["accepted"] is True
    bob.send(_answer(listed["B"], "no"))
    assert _ack(bob, listed["B"]["rpc_id"])["accepted"] is True
    b = forward_b.reply(1)
    # carol, after the answer, straight to the hub process alice's answer did not go through
    late = httpx2.post(f"{two}/desk", content=json.dumps(_answer(listed["A"], "no")),
                       headers={"Authorization": f"Bearer {tokens['carol']}"}, timeout=CEILING)
    assert late.status_code == 200, late.text
    [again] = [json.loads(line) for line in late.text.splitlines()]
    # every entry has left every desk: what each listed is all it was ever shown
    for desk in (alice, bob, carol):
        _seen(desk, lambda e: e["type"] == "inbox/changed" and e["change"] == "removed"
              and e["pending"] == 0, "its list emptied")

    def saw(desk: Controller) -> set[str]:
        return {e["questions"][0]["header"] for e in desk.events
                if e["type"] == "question/requested"}

    return {"listed": listed, "taken": taken, "a": a, "b": b, "again": again,
            "alice_saw": saw(alice), "bob_saw": saw(bob), "carol_saw": saw(carol)}


@needs_chromium
def test_the_browser_desk_at_phone_width_answers_an_entry_asked_at_the_other_hub_process(
        postgres_pair):
    sync_api = pytest.importorskip("playwright.sync_api")
    from playwright.sync_api import expect

    location, one, two = postgres_pair.location, postgres_pair.one, postgres_pair.two
    payments = postgres_pair.srv / "phone"  # routed to phone-payments
    payments.mkdir()
    elsewhere = postgres_pair.srv / "phone_web"  # routed to phone-ops
    elsewhere.mkdir()
    hana = agent_token(location, "hana", "human", "phone-payments")
    tokens = ("phone-a", "phone-b")

    def own_pending(store: HubStore) -> list:  # another test's may share the store
        return [e for e in store.pending() if e.token in tokens]

    parties: list[Any] = []
    try:
        web = DshChild("attach", "--hub", one, "--web", env={"DSH_HUB_TOKEN": hana})
        parties.append(web)
        url = web.said("dsh: open http://127.0.0.1:")
        asker = StdioAgent(two, agent_token(location, "phone-a"), payments, "claude-a")
        other = StdioAgent(two, agent_token(location, "phone-b"), elsewhere, "claude-b")
        parties += [asker, other]
        other.ask(1, _batch("Ops"))  # routed to phone-ops: never on hana's page
        asker.ask(1, _batch("Payments"))
        with HubStore.open(location) as store:  # both asked before the page looks
            wait_until(lambda: len(own_pending(store)) == 2, "both entries pending")
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                 args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 390, "height": 760}).new_page()
            page.set_default_timeout(CEILING * 1000)
            page.goto(url)
            entry = page.locator("button.entry")
            expect(entry).to_have_count(1)
            assert entry.locator(".who").text_content().startswith("claude-a · ")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            entry.click()
            page.locator("#composer").wait_for()
            assert str(payments) in page.locator("#qc-asker").text_content()
            page.locator("button.option[data-label='yes']").click()
            page.locator("#qc-primary", has_text="Submit").click()
            answered = asker.reply(1)
            expect(page.locator("#idle")).to_be_visible()
            browser.close()
        assert answered["result"]["structuredContent"] == {
            "answers": [{"id": "q", "selected": ["yes"]}]}
        with HubStore.open(location) as store:
            [left] = own_pending(store)
            assert (left.agent, left.team) == ("claude-b", "phone-ops")
            steps = [(item.step.action, item.step.actor, item.step.replica)
                     for item in store.history(agent="phone-a").items]
    finally:
        for party in reversed(parties):
            party.stop()
    # opening the entry claimed it; the answer went through hana's hub process
    assert steps == [("ask", "phone-a", "two"), ("claim", "hana", "one"),
                     ("answer", "hana", "one")]


def test_a_task_asked_at_one_hub_process_is_answered_at_a_desk_of_the_other(
        postgres_pair, monkeypatch):
    """The raw HTTP agent of the issue, using MCP tasks: its task lives in the process it
    asked at, the answer comes from a desk at the other."""
    location, one, two = postgres_pair.location, postgres_pair.one, postgres_pair.two
    cwd = postgres_pair.srv / "tasks" / "wörk"  # routed to tasks: the desk's human's team
    token = agent_token(location, "raw-agent")
    monkeypatch.setenv("DSH_HUB_TOKEN", agent_token(location, "tasker", "human", "tasks"))
    desk = None
    try:
        desk = Controller("attach", "--hub", one, "--jsonl")
        session = Wire2025(f"{two}/mcp", {"Authorization": f"Bearer {token}",
                                          "X-Dsh-Cwd": quote(str(cwd))})
        created = session.request("tools/call", ask_call({"ttl": 60_000}))["result"]["task"]
        assert created["status"] == "working"
        listed = _seen(desk, lambda e: e["type"] == "question/requested", "the task's entry")
        assert listed["source"]["cwd"] == str(cwd)
        desk.send({"type": "question/answer", "rpc_id": listed["rpc_id"],
                   "session_id": listed["session_id"],
                   "answers": [{"id": "db", "selected": ["SQLite"]}]})
        assert _ack(desk, listed["rpc_id"])["accepted"] is True
        result = session.request("tasks/result", {"taskId": created["taskId"]},
                                 timeout=CEILING)["result"]
        task = session.request("tasks/get", {"taskId": created["taskId"]})["result"]
    finally:
        if desk is not None:
            desk.kill()
    assert result["isError"] is False
    assert result["structuredContent"]["answers"] == [{"id": "db", "selected": ["SQLite"]}]
    assert task["status"] == "completed"
