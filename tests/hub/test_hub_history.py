"""The hub's ``GET /history`` served by uvicorn on 127.0.0.1, read raw over HTTP and by a real
``dsh history --hub URL`` child: human tokens only, only their teams' steps, filters, pages."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import threading

import httpx2
import pytest
from harness.dsh_under_test import DSH

from dsh_cli.hub import HubStore
from dsh_cli.hub.context import HubContext
from dsh_cli.hub.history import HISTORY_LIMIT, history_routes
from dsh_cli.hub.watch import HubWatch

QUESTION = {"questions": [{"id": "db", "question": "Which database?", "options": ["a", "b"]}]}
PERMISSION = {"tool": "Bash", "arguments": {"command": "make deploy"}}


class Hub:
    """A store, its history routes served by uvicorn in a thread, and the tokens of a team."""

    def __init__(self, location: str) -> None:
        self.store = HubStore.open(location, replica="hub-a")
        self.secrets = {name: self.store.add_token(name, kind, team).secret for name, kind, team
                        in [("ci-bot", "agent", None), ("alice", "human", "ops"),
                            ("bob", "human", "devs"), ("carol", "human", None)]}
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        self._listener = listener
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._started.wait(30), "uvicorn did not start"

    def _serve(self) -> None:
        import uvicorn
        from starlette.applications import Starlette

        app = Starlette(routes=history_routes(HubContext(self.store, HubWatch(self.store))))
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        loop = asyncio.new_event_loop()

        async def run() -> None:
            serving = asyncio.create_task(self.server.serve(sockets=[self._listener]))
            while not self.server.started and not serving.done():
                await asyncio.sleep(0.01)
            self._started.set()
            await serving

        loop.run_until_complete(run())
        loop.close()

    def close(self) -> None:
        self.server.should_exit = True
        self._thread.join(30)
        self.store.close()

    def get(self, token: str | None, **params) -> httpx2.Response:
        headers = {"Authorization": f"Bearer {self.secrets.get(token, token)}"} if token else {}
        return httpx2.get(f"{self.url}/history", params=params, headers=headers, timeout=30)


@pytest.fixture
def hub(hub_location):
    served = Hub(hub_location)
    yield served
    served.close()


def settle(store: HubStore) -> dict[str, str]:
    """An ops question answered by alice, a devs permission allowed by bob, an unteamed one
    cancelled by its agent, one pending: their ids."""
    ops = store.ask(token="ci-bot", batch=QUESTION, agent="claude-code", machine="runner-7",
                    cwd="/srv/payments", team="ops")
    store.claim(ops.id, "alice", 30)
    store.answer(ops.id, {"type": "question/answer", "answers": [
        {"id": "db", "selected": ["a"]}]}, by="alice")
    devs = store.ask(token="ci-bot", batch=PERMISSION, agent="codex", machine="laptop-2",
                     cwd="/home/b", kind="permission", team="devs")
    store.answer(devs.id, {"type": "permission/decision", "decision": "allow"}, by="bob")
    anyone = store.ask(token="ci-bot", batch=QUESTION, agent="claude-code", machine="m",
                       cwd="/tmp")
    store.cancel(anyone.id, by="ci-bot")
    waiting = store.ask(token="ci-bot", batch=QUESTION, agent="claude-code", machine="m",
                        cwd="/tmp", team="ops")
    return {"ops": ops.id, "devs": devs.id, "anyone": anyone.id, "waiting": waiting.id}


def steps(response: httpx2.Response) -> list[tuple[str, str, str]]:
    assert response.status_code == 200, response.text
    return [(item["entry"]["id"], item["action"], item["actor"])
            for item in response.json()["items"]]


def test_only_a_human_token_reads_history_each_refusal_one_line(hub):
    settle(hub.store)
    for token in (None, "ci-bot", "dshhub_not-a-token"):
        refused = hub.get(token)
        assert refused.status_code == 401, token
        assert refused.headers["www-authenticate"] == "Bearer"
        assert refused.text.count("\n") == 1 and "human token" in refused.text
    for params, says in [({"limit": "0"}, "limit must be from 1"),
                         ({"limit": str(HISTORY_LIMIT + 1)}, "limit must be from 1"),
                         ({"after": "-1"}, "after must be a whole number"),
                         ({"since": "yesterday"}, "since must be a number"),
                         ({"since": "nan"}, "since must be a finite number"),
                         ({"state": "won"}, "state must be one of"),
                         ({"colour": "red"}, "unknown query parameter 'colour'")]:
        bad = hub.get("alice", **params)
        assert bad.status_code == 400 and says in bad.text and bad.text.count("\n") == 1


def test_a_human_sees_the_steps_of_their_teams_entries_and_unteamed_ones(hub):
    ids = settle(hub.store)
    alice = steps(hub.get("alice"))
    assert alice == [(ids["ops"], "ask", "ci-bot"), (ids["ops"], "claim", "alice"),
                     (ids["ops"], "answer", "alice"), (ids["anyone"], "ask", "ci-bot"),
                     (ids["anyone"], "cancel", "ci-bot"), (ids["waiting"], "ask", "ci-bot")]
    assert {entry for entry, _, _ in steps(hub.get("bob"))} == {ids["devs"], ids["anyone"]}
    assert {entry for entry, _, _ in steps(hub.get("carol"))} == {ids["anyone"]}
    answer = hub.get("alice").json()["items"][2]
    assert answer["replica"] == "hub-a" and answer["at"] > 0
    assert answer["entry"] | {"created_at": 0, "resolved_at": 0} == {
        "id": ids["ops"], "kind": "question", "token": "ci-bot", "agent": "claude-code",
        "machine": "runner-7", "cwd": "/srv/payments", "team": "ops", "state": "answered",
        "answered_by": "alice", "created_at": 0, "resolved_at": 0,
        "asked": "Which database?", "answer": "a"}
    [bobs] = [item for item in hub.get("bob").json()["items"] if item["action"] == "answer"]
    assert (bobs["entry"]["asked"], bobs["entry"]["answer"]) == ("Bash", "allow")


def test_filters_and_pages(hub):
    ids = settle(hub.store)
    assert steps(hub.get("alice", human="alice")) == [(ids["ops"], "claim", "alice"),
                                                      (ids["ops"], "answer", "alice")]
    assert {e for e, _, _ in steps(hub.get("alice", state="pending"))} == {ids["waiting"]}
    assert steps(hub.get("bob", agent="codex")) == [(ids["devs"], "ask", "ci-bot"),
                                                    (ids["devs"], "answer", "bob")]
    assert len(steps(hub.get("alice", agent="ci-bot"))) == 6  # the token's name too
    assert steps(hub.get("alice", since="4102444800")) == []  # 2100: nothing yet
    whole = hub.get("alice").json()
    assert whole["next"] is None
    pages, after = [], 0
    while True:
        page = hub.get("alice", limit="4", after=str(after)).json()
        pages.append(len(page["items"]))
        if page["next"] is None:
            break
        after = page["next"]
    assert pages == [4, 2]


def test_a_page_is_cut_by_the_bytes_of_its_entries_before_they_are_loaded(tmp_path):
    big = {"questions": [{"id": "q", "question": "x" * 200_000, "options": ["a", "b"]}]}
    with HubStore.open(tmp_path / "hub.db") as store:
        for _ in range(5):
            store.ask(token="ci-bot", batch=big, agent="a", machine="m", cwd="/")
        page = store.history(budget=450_000)
        assert len(page.items) == 2 and page.more
        assert len(store.history(budget=1).items) == 1  # one step always, however large
        rest = store.history(after=page.items[-1].step.id)
        assert len(rest.items) == 3 and not rest.more


def dsh_history(hub: Hub, *args: str, token: str | None = "alice",
                **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, **env}
    environ.pop("DSH_HUB_TOKEN", None)
    if token is not None:
        environ["DSH_HUB_TOKEN"] = hub.secrets.get(token, token)
    return subprocess.run([DSH, "history", "--hub", hub.url, *args], capture_output=True,
                          text=True, env=environ, timeout=120)


def test_dsh_history_hub_prints_the_audit_as_a_table_and_as_json(hub, tmp_path):
    ids = settle(hub.store)
    # an agent-written label never drives the terminal: escapes are dropped from the table
    hub.store.ask(token="ci-bot", batch={"questions": [
        {"id": "q", "question": "Deploy?\x1b[2J\x1b]0;owned\x07", "options": ["y", "n"]}]},
        agent="evil\x1b[31m", machine="m", cwd="/", team="ops")
    table = dsh_history(hub)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout
    answer = next(line for line in lines if " answer " in line)
    assert "alice" in answer and ids["ops"][:8] in answer and "claude-code@runner-7" in answer
    assert "ops" in answer and "answered" in answer and "via hub-a" in answer
    assert "    = a" in lines and "    ? Which database?" in lines
    assert ids["devs"][:8] not in table.stdout  # bob's team's
    listed = dsh_history(hub, "--json", "--human", "alice")
    assert listed.returncode == 0, listed.stderr
    assert [(item["action"], item["entry"]["id"]) for item in json.loads(listed.stdout)] == [
        ("claim", ids["ops"]), ("answer", ids["ops"])]
    # the token from a file, pages followed up to --limit, the filters passed on
    token_file = tmp_path / "token"
    token_file.write_text(hub.secrets["bob"] + "\n")
    paged = dsh_history(hub, "--json", "--hub-token-file", str(token_file), "-n", "3",
                        token=None)
    assert paged.returncode == 0, paged.stderr
    assert [item["entry"]["id"] for item in json.loads(paged.stdout)] == [
        ids["devs"], ids["devs"], ids["anyone"]]
    since = dsh_history(hub, "--since", "1h", "--state", "cancelled", "--json")
    assert [item["action"] for item in json.loads(since.stdout)] == ["ask", "cancel"]


def test_dsh_history_hub_failures_are_one_line(hub):
    settle(hub.store)
    for token, says in [(None, "no hub token: set DSH_HUB_TOKEN"),
                        ("ci-bot", "the hub refused the token"),
                        ("has space", "must be one word of visible ASCII")]:
        failed = dsh_history(hub, token=token)
        assert failed.returncode == 1 and failed.stdout == ""
        assert failed.stderr.count("\n") == 1 and says in failed.stderr, failed.stderr
        assert " )" not in failed.stderr  # the hub's line quoted whole, not its newline
        assert hub.secrets["ci-bot"] not in failed.stderr
    usage = dsh_history(hub, "--grep", "x")
    assert usage.returncode == 2 and "--grep reads this machine's sessions" in usage.stderr
    since = dsh_history(hub, "--since", "last tuesday")
    assert since.returncode == 2 and "--since 'last tuesday'" in since.stderr
    assert since.stderr.count("\n") == 1
    state = dsh_history(hub, "--state", "done")
    assert state.returncode == 2 and "--state 'done': one of pending, answered" in state.stderr
    assert state.stderr.count("\n") == 1
    remote = subprocess.run([DSH, "history", "--hub", "http://hub.example:8000"],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "DSH_HUB_TOKEN": "dshhub_x"})
    assert remote.returncode == 2 and "plain http only to this machine" in remote.stderr
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    gone = subprocess.run([DSH, "history", "--hub", f"http://127.0.0.1:{port}"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DSH_HUB_TOKEN": "dshhub_x"})
    assert gone.returncode == 1 and "cannot read the hub" in gone.stderr
    assert gone.stderr.count("\n") == 1
    local = subprocess.run([DSH, "history", "--human", "alice"], capture_output=True,
                           text=True, timeout=120)
    assert local.returncode == 2 and "--human goes with --hub URL" in local.stderr


def test_a_teams_history_is_read_over_the_audits_team_index_and_stays_flat(tmp_path):
    """Other teams' steps cost a human's history read nothing, however many there are."""
    import sqlite3
    import time

    path = tmp_path / "hub.db"
    with HubStore.open(path) as store:
        for _ in range(5):
            store.ask(token="ci-bot", batch=QUESTION, agent="a", machine="m", cwd="/",
                      team="ops")
        with sqlite3.connect(path) as db:
            plan = str(db.execute(
                "EXPLAIN QUERY PLAN SELECT a.id FROM hub_audit a JOIN hub_entries e ON "
                "e.id = a.entry_id WHERE a.id > 0 AND a.team = 'ops' ORDER BY a.id "
                "LIMIT 10").fetchall())
        assert "hub_audit_by_team" in plan and "TEMP B-TREE" not in plan, plan

        def read_time() -> float:
            best = float("inf")
            for _ in range(20):
                started = time.perf_counter()
                assert len(store.history(teams=["ops"]).items) == 5
                best = min(best, time.perf_counter() - started)
            return best

        small = read_time()
        with sqlite3.connect(path) as db:
            db.executemany(
                "INSERT INTO hub_entries (id, kind, batch, token, agent, machine, cwd, state, "
                "created_at, team) VALUES (?, 'question', '{}', 'x', 'a', 'm', '/', "
                "'answered', ?, 'devs')", [(f"x{n}", float(n)) for n in range(100_000)])
            db.executemany(
                "INSERT INTO hub_audit (entry_id, action, actor, replica, at, team) "
                "VALUES (?, 'ask', 'x', 'r', ?, 'devs')",
                [(f"x{n}", float(n)) for n in range(100_000)])
        large = read_time()
        # a join over 100,000 steps costs a tenth of a second; the index ranges, microseconds
        assert large < max(5 * small, 0.005), (small, large)
