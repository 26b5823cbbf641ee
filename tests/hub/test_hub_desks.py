"""The hub's ``/desk`` for real: uvicorn on 127.0.0.1, a real store, real ``dsh attach --hub``.

Entries are asked through the store as the hub's agent side asks them; the desks are
``dsh attach --hub URL --jsonl`` children (or raw HTTP where the wire itself is under test).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading

import httpx2
import pytest
from harness.dsh_under_test import DSH
from harness.hub_desk import DeskServer, wait_until
from harness.jsonl_controller import Controller

from dsh_cli.hub import HubStore

BATCH = {"type": "question/requested", "session_id": "s1", "call_id": "c1",
         "questions": [{"id": "q", "header": "Deploy", "question": "Deploy now?",
                        "options": [{"label": "yes"}, {"label": "no"}]}]}
PERMISSION = {"type": "permission/requested", "session_id": "s1", "call_id": "c2",
              "tool": "Bash", "server": None, "arguments": {"command": "make deploy"},
              "hints": {}}


def _answer(entry_id: str, label: str, session: str | None = "s1") -> dict:
    return {"type": "question/answer", "rpc_id": entry_id, "session_id": session,
            "answers": [{"id": "q", "selected": [label]}]}


class Hub:
    """A store with tokens, its /desk served, and ways to reach it as each party does."""

    def __init__(self, store: HubStore, server: DeskServer) -> None:
        self.store = store
        self.server = server
        self.secrets = {name: store.add_token(name, "human").secret
                        for name in ("alice", "bob", "carol")}
        self.secrets["ci"] = store.add_token("ci", "agent").secret

    def ask(self, batch: dict = BATCH, kind: str = "question") -> str:
        return self.store.ask(token="ci", batch=batch, agent="claude", machine="ci-7",
                              cwd="/src/app", kind=kind).id

    def post(self, who: str, frame: dict | str | bytes) -> httpx2.Response:
        body = frame if isinstance(frame, str | bytes) else json.dumps(frame)
        return httpx2.post(f"{self.server.url}/desk", content=body, timeout=30,
                           headers={"Authorization": f"Bearer {self.secrets[who]}"})

    def replies(self, who: str, frame: dict | str | bytes) -> list[dict]:
        response = self.post(who, frame)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/x-ndjson")
        return [json.loads(line) for line in response.text.splitlines()]

    def desk(self, monkeypatch, who: str) -> Controller:
        """``dsh attach --hub URL --jsonl`` as ``who``, the token in its environment."""
        monkeypatch.setenv("DSH_HUB_TOKEN", self.secrets[who])
        return Controller("attach", "--hub", self.server.url, "--jsonl")


@pytest.fixture
def make_hub(tmp_path):
    """A hub on a SQLite store whose claims last ``lease`` seconds (long by default: a claim
    that ends within a test then ended because something let it go)."""
    made: list[Hub] = []

    def make(lease: float = 60.0) -> Hub:
        store = HubStore.open(tmp_path / f"hub-{len(made)}.db")
        made.append(Hub(store, DeskServer(store, lease=lease).start()))
        return made[-1]

    yield make
    for hub in made:
        hub.server.stop()
        hub.store.close()


@pytest.fixture
def hub(make_hub):
    return make_hub()


def _until(desk: Controller, test, what: str, *, since: int | None = None) -> dict:
    """The first event that passes ``test``, of those from event number ``since`` on (None:
    from now on; the stream and a POST's reply may come in either order)."""
    for event in desk.events[since:] if since is not None else ():
        if test(event):
            return event
    while (event := desk.next()) is not None:
        if test(event):
            return event
    raise AssertionError(f"the desk ended before {what}: {desk.events}\n{desk.stderr()}")


def _ack(desk: Controller, entry_id: str) -> dict:
    return _until(desk, lambda e: e["type"] == "response/ack" and e["rpc_id"] == entry_id,
                  f"the ack of {entry_id}")


def _changed(desk: Controller, entry_id: str, change: str, since: int | None = None) -> dict:
    return _until(desk, lambda e: e["type"] == "inbox/changed" and e["change"] == change
                  and e["entry"]["rpc_id"] == entry_id, f"{change} of {entry_id}", since=since)


def _listed(desk: Controller, entry_id: str) -> dict:
    return _until(desk, lambda e: e["type"] == "question/requested"
                  and e["rpc_id"] == entry_id, f"{entry_id} listed")


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_desk_answers_an_entry_once_after_refused_answers_leave_it_pending(
        engine, tmp_path, monkeypatch, request):
    location = str(tmp_path / "hub.db") if engine == "sqlite" \
        else request.getfixturevalue("postgres_url")
    store = HubStore.open(location)
    server = DeskServer(store).start()
    hub = Hub(store, server)
    desk = hub.desk(monkeypatch, "alice")
    try:
        entry_id = hub.ask()
        listed = _listed(desk, entry_id)
        assert listed["source"] == {"client": "claude", "machine": "ci-7", "cwd": "/src/app",
                                    "token": "ci"}
        assert listed["questions"] == BATCH["questions"] and listed["session_id"] == "s1"

        desk.send(_answer(entry_id, "maybe"))  # no such option
        refused = _ack(desk, entry_id)
        assert (refused["accepted"], refused["reason"]) == (False, "bad-response")
        assert 'unknown label "maybe"' in refused["message"]
        desk.send(_answer(entry_id, "yes", session="s2"))
        assert _ack(desk, entry_id)["reason"] == "wrong-session"
        assert store.get(entry_id).state == "pending"

        before = len(desk.events)
        desk.send(_answer(entry_id, "yes"))
        assert _ack(desk, entry_id)["accepted"] is True
        settled = store.get(entry_id)
        assert (settled.state, settled.answered_by) == ("answered", "alice")
        assert settled.answer == {"type": "question/answer", "session_id": "s1",
                                  "answers": [{"id": "q", "selected": ["yes"]}]}
        removed = _changed(desk, entry_id, "removed", since=before)
        assert removed["pending"] == 0
        resolved = [e for e in desk.events if e["type"] == "question/resolved"]
        assert [(e["rpc_id"], e["outcome"]) for e in resolved] == [(entry_id, "answered")]

        # a second answer, straight to the hub (the desk itself knows it is gone)
        [again] = hub.replies("bob", _answer(entry_id, "no"))
        assert (again["accepted"], again["reason"]) == (False, "not-pending")
        assert [row.action for row in store.audit(entry_id)] == ["ask", "answer"]
        assert desk.finish() == 0
    finally:
        desk.kill()
        server.stop()
        store.close()


def test_a_claim_shows_taken_at_the_other_desk_and_a_killed_desk_lets_it_go(hub, monkeypatch):
    alice, bob = hub.desk(monkeypatch, "alice"), hub.desk(monkeypatch, "bob")
    try:
        entry_id = hub.ask()
        _listed(alice, entry_id)
        _listed(bob, entry_id)
        alice.send({"type": "desk/opened", "rpc_id": entry_id})
        taken = _changed(bob, entry_id, "taken")["entry"]
        assert (taken["taken"], taken["taken_by"]) == (True, "alice")  # "taken by alice"
        assert not [e for e in bob.events if e["type"] == "desk/opened"]  # the inbox's
        # change is what a --jsonl program sees
        assert hub.store.get(entry_id).claimed_by == "alice"
        # alice's own claim is not "taken" at her desk: a later entry reaches her after
        # whatever the claim made her stream say (a stream tells changes oldest entry first)
        later = hub.ask()
        _listed(alice, later)
        assert not [e for e in alice.events if e["type"] == "inbox/changed"
                    and e["change"] == "taken"]

        alice.kill()  # mid-claim: its lease (a minute) would outlast the test
        _changed(bob, entry_id, "free")
        assert hub.store.get(entry_id).claimed_by is None
        assert [(row.action, row.actor) for row in hub.store.audit(entry_id)] == [
            ("ask", "ci"), ("claim", "alice"), ("release", "alice")]
        assert hub.store.get(entry_id).state == "pending"  # free for the next human
        bob.send({"type": "desk/opened", "rpc_id": entry_id})
        wait_until(lambda: hub.store.get(entry_id).claimed_by == "bob", "bob's claim")
    finally:
        alice.kill()
        bob.kill()


def test_a_claim_nobody_renews_lapses_and_the_other_desk_sees_it_free(make_hub, monkeypatch):
    hub = make_hub(lease=1.0)
    bob = hub.desk(monkeypatch, "bob")
    try:
        entry_id = hub.ask()
        _listed(bob, entry_id)
        # carol claims with no stream of hers, and never renews: only the lease ends it
        assert hub.replies("carol", {"type": "desk/opened", "rpc_id": entry_id}) == []
        assert _changed(bob, entry_id, "taken")["entry"]["taken_by"] == "carol"
        assert "taken_by" not in _changed(bob, entry_id, "free")["entry"]
        assert [row.action for row in hub.store.audit(entry_id)] == ["ask", "claim"]
        # bob claiming now takes it over; carol is told bob has it
        bob.send({"type": "desk/opened", "rpc_id": entry_id})
        wait_until(lambda: hub.store.get(entry_id).claimed_by == "bob", "bob's claim")
        [said] = hub.replies("carol", {"type": "desk/opened", "rpc_id": entry_id})
        assert said == {"type": "desk/opened", "rpc_id": entry_id, "by": "bob"}
    finally:
        bob.kill()


def test_fifty_answers_at_once_exactly_one_is_accepted(hub):
    entry_id = hub.ask()

    async def answer_all() -> list[dict]:
        async with httpx2.AsyncClient(timeout=60) as client:
            async def one(index: int) -> dict:
                who = ("alice", "bob", "carol")[index % 3]
                response = await client.post(
                    f"{hub.server.url}/desk", content=json.dumps(_answer(entry_id, "yes")),
                    headers={"Authorization": f"Bearer {hub.secrets[who]}"})
                assert response.status_code == 200
                return json.loads(response.text)

            return await asyncio.gather(*(one(index) for index in range(50)))

    acks = asyncio.run(answer_all())
    assert sum(ack["accepted"] for ack in acks) == 1
    assert {ack.get("reason") for ack in acks if not ack["accepted"]} == {"not-pending"}
    assert [row.action for row in hub.store.audit(entry_id)].count("answer") == 1


def test_a_permission_decision_is_checked_then_settles_the_request(hub):
    entry_id = hub.ask(PERMISSION, kind="permission")
    decision = {"type": "permission/decision", "rpc_id": entry_id, "session_id": "s1",
                "decision": "allow_forever"}
    [refused] = hub.replies("alice", decision)
    assert (refused["accepted"], refused["reason"]) == (False, "bad-response")
    [wrong] = hub.replies("alice", _answer(entry_id, "yes"))  # a question's frame
    assert wrong["reason"] == "not-pending"
    assert hub.store.get(entry_id).state == "pending"
    [accepted] = hub.replies("alice", {**decision, "decision": "allow_once"})
    assert accepted["accepted"] is True
    assert hub.store.get(entry_id).answer["decision"] == "allow_once"


def test_only_a_human_token_opens_the_desk(hub):
    url = f"{hub.server.url}/desk"
    for headers in ({"Authorization": f"Bearer {hub.secrets['ci']}"},
                    {"Authorization": "Bearer dshhub_not-a-token"}, {}):
        for method in ("GET", "POST"):
            response = httpx2.request(method, url, headers=headers, content=b"{}", timeout=30)
            assert response.status_code == 401, (method, headers)
            assert response.text.count("\n") == 1 and "human" in response.text
    agent = httpx2.get(url, headers={"Authorization": f"Bearer {hub.secrets['ci']}"})
    assert agent.text == "this is an agent's token: /desk takes a human's\n"


def test_a_bad_frame_is_one_error_line_and_changes_nothing(hub):
    entry_id = hub.ask()
    for body in (b"not json", b'{"type": "question/answer"}', b"x" * 1_000_010,
                 b'{"type": "inbox/list"}'):
        [error] = hub.replies("alice", body)
        assert (error["type"], error["code"]) == ("error", "BAD_FRAME"), error
    assert hub.store.get(entry_id).state == "pending"
    assert hub.replies("alice", {"type": "desk/taken", "rpc_id": entry_id}) == []
    replay = hub.replies("alice", {"type": "questions/replay"})
    assert [(e["type"], e["rpc_id"]) for e in replay] == [("question/requested", entry_id)]


def test_the_desk_says_when_the_hub_goes_and_lists_again_when_it_is_back(hub, monkeypatch):
    desk = hub.desk(monkeypatch, "alice")
    try:
        entry_id = hub.ask()
        _listed(desk, entry_id)
        hub.server.stop()
        removed = _changed(desk, entry_id, "removed")
        assert removed["reason"] == "the hub went away"
        gone = [e for e in desk.events if e["type"] == "question/resolved"]
        assert [(e["rpc_id"], e["outcome"]) for e in gone] == [(entry_id, "aborted")]
        hub.server.start()  # the same port
        _listed(desk, entry_id)
        _changed(desk, entry_id, "added")
        desk.send(_answer(entry_id, "no"))
        ack = _ack(desk, entry_id)
        assert ack["accepted"] is True, (ack, desk.events)
        assert desk.finish() == 0
        said = desk.process.stderr.read()
        assert "the hub went away (127.0.0.1:" in said and "is back" in said, said
    finally:
        desk.kill()


def test_a_stream_that_is_not_read_misses_nothing_once_it_is(hub):
    """Changes heard while the desk does not read only mark entries to re-read (at most
    HUB_DESK_WAKES, then the whole list): once read, every entry is there, once."""
    headers = {"Authorization": f"Bearer {hub.secrets['alice']}"}
    seen: list[dict] = []
    hello = threading.Event()
    go_on = threading.Event()

    def read() -> None:
        with httpx2.stream("GET", f"{hub.server.url}/desk", headers=headers,
                           timeout=60) as response:
            lines = response.iter_lines()
            seen.append(json.loads(next(lines)))
            hello.set()
            go_on.wait(60)  # not reading while the entries are asked
            for line in lines:
                if line:
                    seen.append(json.loads(line))
                if len(seen) > 300:
                    return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert hello.wait(30)
    asked = [hub.ask() for _ in range(300)]
    go_on.set()
    reader.join(60)
    listed = [e["rpc_id"] for e in seen if e["type"] == "question/requested"]
    assert sorted(listed) == sorted(asked)


@pytest.mark.parametrize(("args", "said"), [
    (["--hub", "http://192.0.2.1:8"], "plain http only to this machine"),
    (["--hub", "ftp://127.0.0.1/"], "is not an http(s) URL"),
    (["--hub", "http://127.0.0.1:9", "--hub-token-file", "/nonexistent"], "/nonexistent"),
    (["--insecure-http"], "--insecure-http needs --hub"),
])
def test_attach_hub_refuses_in_one_line(args, said, monkeypatch):
    monkeypatch.setenv("DSH_HUB_TOKEN", "dshhub_x")
    done = subprocess.run([DSH, "attach", "--jsonl", *args], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert said in done.stderr and done.stdout == ""


def test_attach_hub_needs_a_token(monkeypatch):
    monkeypatch.delenv("DSH_HUB_TOKEN", raising=False)
    done = subprocess.run([DSH, "attach", "--jsonl", "--hub", "http://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "DSH_HUB_TOKEN" in done.stderr


def test_changes_heard_for_a_desk_are_marks_bounded_by_count(tmp_path):
    """However many changes come while a stream's loop is held up, it keeps at most
    HUB_DESK_WAKES entry ids to re-read; past that, one mark: re-read the whole list."""
    from dsh_cli.core.limits import HUB_DESK_WAKES
    from dsh_cli.hub.context import HubContext
    from dsh_cli.hub.desks import DeskStream
    from dsh_cli.hub.records import Change
    from dsh_cli.hub.watch import HubWatch

    async def main() -> None:
        with HubStore.open(tmp_path / "hub.db") as store:
            alice = store.add_token("alice", "human").token
            stream = DeskStream(HubContext(store, HubWatch(store)), alice)
            stream._everything = False  # as after its first read
            for index in range(HUB_DESK_WAKES):
                stream.heed(Change("ask", f"e{index}", "r"))
            assert len(stream._wakes) == HUB_DESK_WAKES and not stream._everything
            for index in range(10 * HUB_DESK_WAKES):
                stream.heed(Change("ask", f"more{index}", "r"))
                assert len(stream._wakes) <= HUB_DESK_WAKES
            assert stream._everything and not stream._wakes
            stream._everything = False
            stream.heed(Change("claim", "unknown", "r"))  # of an entry never told: nothing
            assert not stream._wakes and not stream._everything
            stream._reading = True  # unless a read under way may be about to tell it
            stream.heed(Change("claim", "unknown", "r"))
            assert stream._wakes == {"unknown"}

    asyncio.run(main())


def test_a_plain_desk_answers_through_the_hub_as_through_a_server(hub, monkeypatch):
    """The human's desk (``--plain``: lines through pipes) lists, opens and answers a hub's
    entry with the same keys as a dsh mcp's; the store has the human's answer."""
    monkeypatch.setenv("DSH_HUB_TOKEN", hub.secrets["alice"])
    desk = subprocess.Popen([DSH, "attach", "--plain", "--hub", hub.server.url],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    seen = bytearray()
    threading.Thread(target=lambda: [seen.extend(chunk) for chunk in
                                     iter(lambda: desk.stdout.read1(4096), b"")],
                     daemon=True).start()

    def shown(text: str) -> None:
        wait_until(lambda: text.encode() in seen, f"{text!r} on the desk; it wrote {seen!r}")

    try:
        shown("nothing pending")
        entry_id = hub.ask({**BATCH, "questions": [
            {"id": "q", "header": "Name", "question": "Project name?"}]})
        shown("[question] 0s · claude · ci-7 · /src/app")  # the agent's host, not a pid
        assert hub.replies("carol", {"type": "desk/opened", "rpc_id": entry_id}) == []
        shown("~ 1. taken by carol")  # the hub names who has it open
        desk.stdin.write(b"1\n")
        desk.stdin.flush()
        shown("answer (")
        desk.stdin.write(b"acme\n")
        desk.stdin.flush()
        shown("answered here")
        settled = hub.store.get(entry_id)
        assert (settled.state, settled.answered_by) == ("answered", "alice")
        assert settled.answer["answers"] == [{"id": "q", "selected": [], "custom": "acme"}]
        desk.stdin.close()
        assert desk.wait(30) == 0
    finally:
        if desk.poll() is None:
            desk.kill()
            desk.wait()


def test_the_web_desk_answers_through_the_hub_with_the_hubs_acks(hub):
    """``dsh attach --web --hub``: the page's answer goes to the hub, and the page's reply is
    the hub's own ack (its check of the answer), under the page's id."""
    import io

    from harness.mcp_util import bounded
    from harness.web_site import Site

    from dsh_cli.desk.hub_link import HubAddress, desk_url
    from dsh_cli.desk.web import WebDesk

    entry_id = hub.ask()

    async def main() -> tuple[dict, dict]:
        address = HubAddress(desk_url(hub.server.url), hub.secrets["alice"], "hub")
        desk = WebDesk(hub=address, stderr=io.StringIO())
        running = asyncio.ensure_future(desk.run())
        try:
            while not desk.server.port or desk.server._task is None or not len(desk.inbox):
                await asyncio.sleep(0.02)
            site = Site(desk.server, None, desk.server.stderr)
            page_id = desk.feed.page_id(desk.inbox.entries()[0])
            bad = await site.post("/api/respond", {**_answer(entry_id, "maybe"),
                                                   "rpc_id": page_id})
            good = await site.post("/api/respond", {**_answer(entry_id, "no"),
                                                    "rpc_id": page_id})
            while len(desk.inbox):  # the hub's stream withdraws it
                await asyncio.sleep(0.02)
            return bad.json(), good.json()
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    bad, good = bounded(main())
    assert (bad["accepted"], bad["reason"]) == (False, "bad-response")
    assert good["accepted"] is True
    settled = hub.store.get(entry_id)
    assert (settled.state, settled.answered_by) == ("answered", "alice")


def test_one_human_holds_a_bounded_number_of_desk_streams(hub):
    from dsh_cli.core.limits import HUB_DESK_STREAMS

    url = f"{hub.server.url}/desk"

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=30) as client:
            def opening(who: str):
                return client.send(client.build_request(
                    "GET", url, headers={"Authorization": f"Bearer {hub.secrets[who]}"}),
                    stream=True)

            held = [await opening("alice") for _ in range(HUB_DESK_STREAMS)]
            assert {response.status_code for response in held} == {200}
            refused = await opening("alice")
            assert refused.status_code == 429
            assert (await refused.aread()).decode().count("\n") == 1
            other = await opening("bob")  # another human's are counted apart
            assert other.status_code == 200
            await held.pop().aclose()
            while (again := await opening("alice")).status_code != 200:  # once it is gone
                await again.aclose()
                await asyncio.sleep(0.05)
            for response in [*held, other, again]:
                await response.aclose()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_desk_stream_ends_within_a_heartbeat_once_its_humans_token_is_removed(
        hub, monkeypatch):
    import dsh_cli.hub.desks

    monkeypatch.setattr(dsh_cli.hub.desks, "HEARTBEAT_SECONDS", 0.2)  # checked this often
    url = f"{hub.server.url}/desk"

    async def main() -> list[str]:
        async with httpx2.AsyncClient(timeout=30) as client:
            request = client.build_request(
                "GET", url, headers={"Authorization": f"Bearer {hub.secrets['alice']}"})
            response = await client.send(request, stream=True)
            assert response.status_code == 200
            lines = response.aiter_lines()
            assert json.loads(await anext(lines))["type"] == "desk/hello"
            hub.store.remove_token("alice")
            # the stream ends at its next heartbeat's check (it went on for ever, announcing
            # every entry asked since to a human who is no longer one of the hub's)
            said = [line async for line in lines if line]
            await response.aclose()
            again = await client.get(url, headers={
                "Authorization": f"Bearer {hub.secrets['alice']}"})
            assert again.status_code == 401  # its desk's reconnect: refused, said once
            return said

    assert asyncio.run(asyncio.wait_for(main(), 30)) == []


def test_a_desk_whose_humans_token_is_removed_says_the_hub_refuses_it(hub, monkeypatch):
    import queue

    import dsh_cli.hub.desks

    monkeypatch.setattr(dsh_cli.hub.desks, "HEARTBEAT_SECONDS", 0.2)  # checked this often
    desk = hub.desk(monkeypatch, "alice")
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [said.put(line) for line in desk.process.stderr],
                     daemon=True).start()
    try:
        entry_id = hub.ask()
        _listed(desk, entry_id)
        hub.store.remove_token("alice")
        _changed(desk, entry_id, "removed")  # the stream ended at its heartbeat
        lines = [said.get(timeout=30)]
        # it said only "the hub went away … trying again", then tried for ever in silence
        while "refused the desk" not in lines[-1]:
            lines.append(said.get(timeout=30))
        assert any("the hub went away" in line for line in lines), lines
        assert "(HTTP 401: " in lines[-1], lines
    finally:
        desk.kill()


def test_the_terminal_desk_claims_while_open_and_answers_through_the_hub(hub, monkeypatch,
                                                                          tmp_path):
    """The terminal desk in a pty: the hub's entry in its list, held (claimed) while it is
    open, answered by a key; the store has alice's answer and no claim left."""
    from harness.pty_util import spawn

    monkeypatch.setenv("DSH_HUB_TOKEN", hub.secrets["alice"])
    child = spawn(f"{DSH} attach --hub {hub.server.url}", str(tmp_path), timeout=20)
    try:
        child.expect("nothing pending")
        entry_id = hub.ask()
        child.expect("inbox · 1 pending")
        child.expect("claude")
        child.send("\r")  # enter opens the entry under the cursor
        child.expect("claude asks · ci-7 · /src/app")
        child.expect("Deploy now")
        wait_until(lambda: hub.store.get(entry_id).claimed_by == "alice", "alice's claim")
        child.send("1")  # single-select: the digit picks and submits
        wait_until(lambda: hub.store.get(entry_id).state == "answered", "the answer")
        settled = hub.store.get(entry_id)
        assert settled.answered_by == "alice" and settled.claimed_by is None
        assert settled.answer["answers"] == [{"id": "q", "selected": ["yes"]}]
        child.expect("nothing pending")
        child.sendcontrol("d")
        child.expect("desk closed")
    finally:
        child.close(force=True)


def test_frames_a_hub_does_not_take_are_bounded_in_number_and_bytes():
    """A hub that never answers a POST: the desk's frames wait up to QUEUED_FRAMES and
    QUEUED_BYTES, past which each is dropped and said, never held."""
    from dsh_cli.desk.hub_link import QUEUED_BYTES, QUEUED_FRAMES, HubAddress, HubLink

    class Hung:
        """A stream that says nothing and a client whose POSTs never return."""

        async def aiter_raw(self):
            await asyncio.Event().wait()
            yield b""

        def stream(self, *args, **kwargs):
            return self

        async def __aenter__(self):
            await asyncio.Event().wait()

        async def __aexit__(self, *exc):
            return False

        async def aclose(self):
            pass

    async def main() -> tuple[list[str], int, int]:
        said: list[str] = []
        link = HubLink(HubAddress("http://127.0.0.1:9/desk", "t", "hub"), Hung(), Hung(),
                       said.append)
        line = b'{"type":"desk/opened","rpc_id":"x"}\n'
        for _ in range(QUEUED_FRAMES + 10):
            link.send_line(line)
            await asyncio.sleep(0)
        by_number = link._frames.qsize()
        dropped = len(said)
        big = b"x" * (QUEUED_BYTES // 3) + b"\n"
        await link.aclose()
        link = HubLink(HubAddress("http://127.0.0.1:9/desk", "t", "hub"), Hung(), Hung(),
                       said.append)
        for _ in range(5):
            link.send_line(big)
            await asyncio.sleep(0)
        assert link._queued <= QUEUED_BYTES
        await link.aclose()
        return said, by_number, dropped

    said, by_number, dropped = asyncio.run(asyncio.wait_for(main(), 30))
    assert by_number == QUEUED_FRAMES and dropped == 9  # one is in flight, never answered
    assert len(said) == 9 + 2 and all("one was dropped" in line for line in said)


def test_a_frame_the_hub_does_not_take_is_a_hub_unreachable_error_at_the_desk(hub):
    """A POST the hub refuses (a token removed since the stream opened: 401) or that reaches
    nobody is one ``error`` event (HUB_UNREACHABLE) saying why, and one line said."""
    from dsh_cli.core.errors import HUB_UNREACHABLE
    from dsh_cli.desk.hub_link import HubAddress, HubLink, desk_url
    from dsh_cli.desk.protocol import DeskError, DeskOpened

    class Silent:
        """A stream that says nothing until the link closes."""

        async def aiter_raw(self):
            await asyncio.Event().wait()
            yield b""

        async def aclose(self):
            pass

    async def refused(url: str) -> tuple[object, list[str]]:
        said: list[str] = []
        async with httpx2.AsyncClient(timeout=30) as client:
            link = HubLink(HubAddress(url, "dshhub_removed", "hub"), client, Silent(),
                           said.append)
            try:
                link.send(DeskOpened(rpc_id="e1"))
                return await asyncio.wait_for(link.read_event(), 30), said
            finally:
                await link.aclose()

    for url, why in [(desk_url(hub.server.url), "HTTP 401"),
                     ("http://127.0.0.1:9/desk", "ConnectError")]:
        event, said = asyncio.run(refused(url))
        assert isinstance(event, DeskError) and event.code == HUB_UNREACHABLE, event
        assert why in (event.message or "") and len(said) == 1 and why in said[0]
