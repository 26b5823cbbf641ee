"""``dsh attach --web`` over HTTP, no browser: the rules of ``dsh web`` and the routing.

The desk runs in the test's loop; the servers it follows are real ``dsh mcp`` processes.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from harness.mcp_util import BATCH, attach_here, bounded, client, held_agent
from harness.web_site import Site

from dsh_cli.desk.web import WebDesk
from dsh_cli.providers.web.app import CSP


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """One ``dsh mcp --wait 20`` named agent-a (its own DSH_HOME) for the tests whose every
    batch and request is settled (answered, cancelled, denied) before they end: a desk that
    attaches later finds nothing pending, and a deny grants nothing. One child, not one per
    test (each start is about a second of CPU). The tests that stop or kill their server,
    and the one of two servers, keep their own."""
    yield from held_agent(tmp_path_factory, "--wait", "20", name="agent-a")


@pytest.fixture
def at_agent(agent, monkeypatch):
    """The shared agent's session and where it listens, this test's desks attaching there."""
    attach_here(agent, monkeypatch)
    run = Path(agent.env["DSH_HOME"]) / "run"
    assert len(str(run / "mcp-4194304.sock")) < 104, "Unix socket paths are limited"
    return agent.here, run


async def _first_entry(desk: WebDesk) -> Any:
    """The desk's first inbox entry, once one is listed."""
    while len(desk.inbox) < 1:
        await asyncio.sleep(0.05)
    return desk.inbox.entries()[0]


async def _with_desk(runtime_dir: Path, scenario: Any) -> Any:
    desk = WebDesk(directory=runtime_dir, stderr=io.StringIO())
    running = asyncio.ensure_future(desk.run())
    while not desk.server.port or desk.server._task is None:
        await asyncio.sleep(0.01)
    site = Site(desk.server, None, desk.server.stderr)  # type: ignore[arg-type]
    try:
        return await scenario(desk, site)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


def test_the_web_desk_keeps_the_token_host_origin_and_csrf_rules_of_dsh_web(runtime_dir):
    async def scenario(desk, site):
        bare = {"Host": site.authority}
        for path in ("/", "/api/events", "/static/js/main.js"):
            assert (await site.request("GET", path, bare)).status == 403, path
        assert (await site.request("GET", "/?token=wrong", bare)).status == 403
        swap = await site.request("GET", f"/?token={desk.server.token}", bare)
        assert swap.status == 303 and desk.server.token not in swap.cookies[0]
        assert (await site.request("GET", "/", site.headers(Host="evil.example"))).status == 403
        page = await site.request("GET", "/", site.headers())
        assert page.status == 200 and page.headers["content-security-policy"] == CSP
        assert b'<meta name="dsh-mode" content="desk">' in page.body
        frame = {"type": "question/cancel", "rpc_id": "n1", "session_id": None}
        good = site.post_headers()
        for name, headers in {
            "no origin": {k: v for k, v in good.items() if k != "Origin"},
            "foreign origin": {**good, "Origin": "http://evil.example"},
            "no csrf": {k: v for k, v in good.items() if k != "X-DSH-CSRF"},
            "no cookie": {k: v for k, v in good.items() if k != "Cookie"},
        }.items():
            assert (await site.request("POST", "/api/respond", headers, frame)).status == 403, name
        unknown = await site.post("/api/respond", frame)
        assert unknown.status == 200
        assert unknown.json()["reason"] == "not-pending"
        assert unknown.json()["shown"]["error"].startswith("Not accepted: this batch is no")
        for bad in ({"type": "question/discuss", "rpc_id": "n1"}, {"type": "question/answer"},
                    [1, 2], b"{not json"):
            reply = await site.post("/api/respond", bad)
            assert reply.status == 400, bad
            assert reply.json()["shown"]["error"]
        return True

    assert bounded(_with_desk(runtime_dir, scenario))


def test_an_answer_goes_back_through_the_batchs_own_server_under_the_pages_id(
        runtime_dir, tmp_path):
    """Two real ``dsh mcp``; the page's ids are the desk's own (``n1-RUN``, ``n2-RUN``), the answer
    reaches the server that asked, naming its session, and the reply is that server's ack."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()

    async def scenario(desk, site):
        async with client("--wait", "20", name="agent-a", cwd=str(tmp_path / "a")) as a, \
                client("--wait", "20", name="agent-b", cwd=str(tmp_path / "b")) as b:
            call_a = asyncio.ensure_future(a.call_tool("ask_user_question", BATCH))
            while len(desk.inbox) < 1:
                await asyncio.sleep(0.05)
            call_b = asyncio.ensure_future(b.call_tool("ask_user_question", BATCH))
            while len(desk.inbox) < 2:
                await asyncio.sleep(0.05)
            events = await site.events(4)  # two entries, replay/done, then the list
            asked = [e for e in events if e["type"] == "question/requested"]
            run = desk.feed.run
            n1, n2 = f"n1-{run}", f"n2-{run}"
            assert [e["rpc_id"] for e in asked] == [n1, n2]
            listing = next(e for e in events if e["type"] == "inbox/list")
            assert [(e["id"], e["kind"]) for e in listing["entries"]] == [
                (n1, "question"), (n2, "question")]
            assert listing["entries"][0]["who"].startswith("agent-a · ")
            assert asked[1]["shown"]["asker"].startswith("agent-b · ")
            assert asked[0]["shown"]["questions"][0]["options"][0] == {
                "label": "PostgreSQL", "recommended": True, "last": False,
                "description": None, "preview": None}
            bad = await site.post("/api/respond", {
                "type": "question/answer", "rpc_id": n2, "session_id": asked[1]["session_id"],
                "answers": [{"id": "db", "selected": ["MySQL"]}]})
            assert bad.json()["accepted"] is False and bad.json()["rpc_id"] == n2
            assert bad.json()["reason"] == "bad-response"  # the server's own check
            foreign = await site.post("/api/respond", {
                "type": "question/answer", "rpc_id": n2, "session_id": "not-its-session",
                "answers": [{"id": "db", "selected": ["SQLite"]}]})
            assert foreign.json()["reason"] == "wrong-session"
            # the page's words name the page's id, never the server's (an async ticket)
            assert foreign.json()["message"].startswith(f"{n2} belongs to "), foreign.body
            assert n2 in foreign.json()["shown"]["error"]
            good = await site.post("/api/respond", {
                "type": "question/answer", "rpc_id": n2, "session_id": asked[1]["session_id"],
                "answers": [{"id": "db", "selected": ["SQLite"]}]})
            assert good.json()["accepted"] is True
            result_b = await call_b
            assert result_b.structured_content["answers"][0]["selected"] == ["SQLite"]
            while len(desk.inbox) > 1:
                await asyncio.sleep(0.05)
            assert not call_a.done()  # the other server's batch is still pending
            assert [entry.number for entry in desk.inbox.entries()] == [1]
            await site.post("/api/respond", {"type": "question/cancel", "rpc_id": n1,
                                             "session_id": asked[0]["session_id"]})
            result_a = await call_a
            return result_a

    result_a = bounded(_with_desk(runtime_dir, scenario))
    assert result_a.structured_content["error"]["code"] == "ASK_CANCELLED"


def test_web_is_a_desk_of_its_own_and_port_belongs_to_it():
    import subprocess

    from harness.dsh_under_test import DSH

    for args, said in ((["--web", "--plain"], "cannot be combined"),
                       (["--web", "--jsonl"], "cannot be combined"),
                       (["--port", "8765"], "--port needs --web"),
                       (["--web", "--port", "70000"], "70000 is not in the range 0<=x<=65535"),
                       (["--web", "--port", "-1"], "is not in the range")):
        run = subprocess.run([DSH, "attach", *args], capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
        assert run.returncode == 2, args
        assert said in run.stderr, (args, run.stderr)


def test_a_taken_port_is_one_line_and_exit_2(runtime_dir):
    import socket
    import subprocess

    from harness.dsh_under_test import DSH

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([DSH, "attach", "--web", "--port", str(port)], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"dsh: WEB_BIND_FAILED: cannot listen on 127.0.0.1:{port}: "), last


def test_an_entry_held_at_another_desk_is_listed_taken_and_the_pages_hold_reaches_it(
        at_agent):
    """A ``dsh attach --jsonl`` desk opens the entry: the web desk's list says taken; the
    page opens it in turn, and the other desk hears it (``desk/opened`` via the server)."""
    from harness.mcp_util import jsonl_desk

    agent, sockets = at_agent

    async def scenario(desk, site):
        async with jsonl_desk() as other:
            call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
            requested = await other.event("question/requested")
            while len(desk.inbox) < 1:
                await asyncio.sleep(0.05)
            await other.send({"type": "desk/opened", "rpc_id": requested["rpc_id"]})
            while not desk.inbox.entries()[0].taken:
                await asyncio.sleep(0.05)
            listing = (await site.events(3))[-1]  # the entry, replay/done, the list
            assert listing["type"] == "inbox/list"
            assert listing["entries"][0]["taken"] is True
            await other.send({"type": "desk/released", "rpc_id": requested["rpc_id"]})
            while desk.inbox.entries()[0].taken:
                await asyncio.sleep(0.05)
            page_id = desk.feed.page_id(desk.inbox.entries()[0])
            tab = await _Tab(site).open()
            await tab.hold("desk/opened", page_id)
            change = await other.event("inbox/changed")
            while change["change"] != "taken":
                change = await other.event("inbox/changed")
            await site.post("/api/respond", {"type": "question/cancel", "rpc_id": page_id,
                                             "session_id": requested["session_id"]})
            await tab.close()
            return await call

    result = bounded(_with_desk(sockets, scenario))
    assert result.structured_content["error"]["code"] == "ASK_CANCELLED"


def test_a_malformed_frame_is_400_at_once_and_the_next_answer_gets_its_own_reply(at_agent):
    """``answers`` not a list is ``BAD_FRAME`` at the desk (before: sent on, the server's
    ``error`` left its reply slot waiting, 504 after 10 s, and the next valid answer's ack was
    given to it); a decision with a field the server does not know is forwarded without it."""
    permission = {"tool_name": "Bash", "input": {"command": "git push --force"},
                  "tool_use_id": "toolu_9"}

    agent, sockets = at_agent

    async def scenario(desk, site):
        call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
        entry = await _first_entry(desk)
        page_id, session = desk.feed.page_id(entry), entry.event["session_id"]
        loop = asyncio.get_running_loop()
        started = loop.time()
        bad = asyncio.ensure_future(site.post("/api/respond", {
            "type": "question/answer", "rpc_id": page_id, "session_id": session,
            "answers": "bogus"}))
        await asyncio.sleep(0.5)
        good = await site.post("/api/respond", {
            "type": "question/answer", "rpc_id": page_id, "session_id": session,
            "answers": [{"id": "db", "selected": ["SQLite"]}]})
        bad = await bad
        assert bad.status == 400 and bad.json()["code"] == "BAD_FRAME", bad.body
        assert "answers" in bad.json()["shown"]["error"]
        assert good.status == 200 and good.json()["accepted"] is True, good.body
        assert loop.time() - started < 5
        answered = await call
        asking = asyncio.ensure_future(agent.call_tool("approve_tool_use", permission))
        entry = await _first_entry(desk)
        decided = await site.post("/api/respond", {
            "type": "permission/decision", "rpc_id": desk.feed.page_id(entry),
            "session_id": entry.event["session_id"], "decision": "deny",
            "message": "not now", "from_a_newer_page": True})
        assert decided.status == 200 and decided.json()["accepted"] is True, decided.body
        return answered, await asking

    answered, decided = bounded(_with_desk(sockets, scenario))
    assert answered.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    assert "deny" in decided.content[0].text


def test_a_long_answer_of_emoji_reaches_its_server_whole(at_agent):
    """90,000 emoji (360 KB of UTF-8, within the answer's characters) reach ``dsh mcp``:
    before, the desk ASCII-escaped them into a line of more than a megabyte the server
    refused as ``BAD_FRAME`` (``FRAME_BYTES``)."""
    import json

    custom = "\U0001f600" * 90_000

    agent, sockets = at_agent

    async def scenario(desk, site):
        call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
        entry = await _first_entry(desk)
        body = json.dumps({
            "type": "question/answer", "rpc_id": desk.feed.page_id(entry),
            "session_id": entry.event["session_id"],
            "answers": [{"id": "db", "selected": [], "custom": custom}]},
            ensure_ascii=False).encode()
        reply = await site.post("/api/respond", body)
        assert reply.status == 200 and reply.json()["accepted"] is True, reply.body[:300]
        return await call

    result = bounded(_with_desk(sockets, scenario))
    assert result.structured_content["answers"] == [{"id": "db", "selected": [],
                                                     "custom": custom}]


def test_a_page_id_of_other_digits_names_no_entry(at_agent):
    """``n²-RUN`` was a 500 (``"²".isdigit()``, ``int`` refuses it), ``n١-RUN`` (Arabic-Indic
    one) cancelled entry 1, and 5000 digits were a 500 too: each is ``not-pending`` now. The
    entry's number is its server's (that server has asked before in this module): the ids
    are built on it, in Arabic-Indic digits too."""
    agent, sockets = at_agent

    async def scenario(desk, site):
        call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
        entry = await _first_entry(desk)
        run, session = desk.feed.run, entry.event["session_id"]
        n = entry.number
        arabic = "".join(chr(0x660 + int(digit)) for digit in str(n))  # ١ for 1
        for page_id in (f"n\u00b2-{run}", f"n{arabic}-{run}", f"n{'1' * 5000}-{run}",
                        f"N{n}-{run}", f"n{n}-{run}0", f"n+{n}-{run}", f" n{n}-{run}",
                        f"n{n}-{run}\n"):
            reply = await site.post("/api/respond", {
                "type": "question/cancel", "rpc_id": page_id, "session_id": session})
            assert reply.status == 200, (page_id, reply.status, reply.body[:200])
            assert reply.json().get("reason") == "not-pending", (page_id, reply.body)
        assert not call.done() and len(desk.inbox) == 1
        reply = await site.post("/api/respond", {
            "type": "question/cancel", "rpc_id": f"n{n}-{run}", "session_id": session})
        assert reply.json()["accepted"] is True
        return await call

    result = bounded(_with_desk(sockets, scenario))
    assert result.structured_content["error"]["code"] == "ASK_CANCELLED"


class _Tab:
    """A browser tab's event stream, kept open: its ``connection`` id names its holds."""

    def __init__(self, site: Any) -> None:
        self.site = site
        self.connection = ""
        self._http: Any = None
        self._response: Any = None

    def _open(self) -> None:
        import http.client
        import json

        self._http = http.client.HTTPConnection("127.0.0.1", self.site.host.port, timeout=10)
        self._http.putrequest("GET", "/api/events", skip_host=True)
        for key, value in self.site.headers().items():
            self._http.putheader(key, value)
        self._http.endheaders()
        self._response = self._http.getresponse()
        while True:
            line = self._response.fp.readline().decode()
            if line.startswith("data: "):
                data = json.loads(line[len("data: "):])
                if data["type"] == "replay/done":
                    self.connection = data["connection"]
                    return

    async def open(self) -> _Tab:
        await asyncio.to_thread(self._open)
        return self

    async def close(self) -> None:
        self._response.close()
        self._http.close()

    async def hold(self, kind: str, page_id: str) -> None:
        reply = await self.site.post("/api/respond", {"type": kind, "rpc_id": page_id,
                                                      "connection": self.connection})
        assert reply.json()["accepted"] is True, reply.body


def test_an_entry_is_held_while_any_tab_has_it_open_and_a_closed_tab_lets_it_go(at_agent):
    """Two tabs open one entry; one goes back: still taken at the other desk (before: freed
    while the second tab had it open); the second tab is closed without going back: free
    (before: taken until the web desk ended)."""
    from harness.mcp_util import jsonl_desk

    async def next_change(other: Any) -> dict[str, Any]:
        return await other.event("inbox/changed")

    agent, sockets = at_agent

    async def scenario(desk, site):
        async with jsonl_desk() as other:
            first = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
            requested = await other.event("question/requested")
            assert (await next_change(other))["change"] == "added"
            while len(desk.inbox) < 1:
                await asyncio.sleep(0.05)
            entry = desk.inbox.entries()[0]
            page_id = desk.feed.page_id(entry)
            one, two = await _Tab(site).open(), await _Tab(site).open()
            assert one.connection != two.connection
            no_stream = await site.post("/api/respond", {"type": "desk/opened",
                                                         "rpc_id": page_id})
            assert no_stream.status == 400 and no_stream.json()["code"] == "BAD_FRAME"
            await one.hold("desk/opened", page_id)
            assert (await next_change(other))["change"] == "taken"
            await two.hold("desk/opened", page_id)
            await one.hold("desk/released", page_id)
            # a round trip through the same server, then a permission request: had the
            # release reached the other desk, its "free" would come before this "added"
            refused = await site.post("/api/respond", {
                "type": "question/answer", "rpc_id": page_id,
                "session_id": entry.event["session_id"],
                "answers": [{"id": "db", "selected": ["MySQL"]}]})
            assert refused.json()["reason"] == "bad-response"
            second = asyncio.ensure_future(agent.call_tool("approve_tool_use", {
                "tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "toolu_1"}))
            assert (await next_change(other))["change"] == "added"
            await two.close()
            freed = await next_change(other)
            assert (freed["change"], freed["entry"]["rpc_id"]) == ("free", requested["rpc_id"])
            await one.close()
            while len(desk.inbox) < 2:
                await asyncio.sleep(0.05)
            for pending in desk.inbox.entries():
                settle = {"type": "permission/decision", "decision": "deny"} \
                    if pending.kind == "permission" else {"type": "question/cancel"}
                await site.post("/api/respond", {**settle, "rpc_id": desk.feed.page_id(pending),
                                                 "session_id": pending.event["session_id"]})
            return (await first).structured_content["error"]["code"], (await second).content

    asked, decided = bounded(_with_desk(sockets, scenario))
    assert asked == "ASK_CANCELLED" and "deny" in decided[0].text


def test_a_server_killed_while_an_answer_waits_is_504_gone_at_once(runtime_dir):
    """``dsh mcp`` stopped (SIGSTOP) as the answer is sent, then killed: the page hears at once
    that its server went away (its link ends the wait), not after ``ACK_WAIT``."""
    import os
    import signal

    async def scenario(desk, site):
        async with client("--wait", "20", name="agent-a") as agent:
            call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
            while len(desk.inbox) < 1:
                await asyncio.sleep(0.05)
            entry = desk.inbox.entries()[0]
            os.kill(entry.link.pid, signal.SIGSTOP)
            reply = asyncio.ensure_future(site.post("/api/respond", {
                "type": "question/answer", "rpc_id": desk.feed.page_id(entry),
                "session_id": entry.event["session_id"],
                "answers": [{"id": "db", "selected": ["SQLite"]}]}))
            while not desk._replies:
                await asyncio.sleep(0.01)
            loop = asyncio.get_running_loop()
            killed = loop.time()
            os.kill(entry.link.pid, signal.SIGKILL)
            reply = await reply
            waited = loop.time() - killed
            await asyncio.gather(call, return_exceptions=True)
            return reply, waited

    try:
        reply, waited = bounded(_with_desk(runtime_dir, scenario))
    except BaseException as error:  # the SDK's client may complain that its server died
        raise AssertionError(f"the scenario failed: {error!r}") from error
    assert reply.status == 504 and "went away" in reply.json()["message"], reply.body
    assert waited < 5


def test_a_tab_that_stops_reading_holds_one_list_and_no_tab_builds_none(at_agent):
    """A list is built only for a connected browser (before: on every change and every 5 s
    with nobody there), and a tab that reads nothing (a phone asleep) holds the latest list
    only, however many changes it sleeps through (before: one list queued per change)."""
    agent, sockets = at_agent

    async def scenario(desk, site):
        built = 0
        listing = desk.feed.listing

        def counted() -> dict[str, Any]:
            nonlocal built
            built += 1
            return listing()

        desk.feed.listing = counted  # type: ignore[method-assign]
        call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
        while len(desk.inbox) < 1:
            await asyncio.sleep(0.05)
        assert built == 0, built  # an entry came, nobody was connected
        tab = await _Tab(site).open()  # it then reads nothing more
        for _ in range(1000):
            desk.feed.list_changed()
        queued = [queue.qsize() for queue in desk.feed._clients]
        entry = desk.inbox.entries()[0]
        await site.post("/api/respond", {
            "type": "question/cancel", "rpc_id": desk.feed.page_id(entry),
            "session_id": entry.event["session_id"]})
        await call
        await tab.close()
        return queued

    queued = bounded(_with_desk(sockets, scenario))
    assert queued and max(queued) <= 2, queued


def test_a_late_reply_is_never_given_to_the_next_frame(runtime_dir, monkeypatch):
    """``dsh mcp`` stopped: a refused answer gets 504 when the wait runs out; resumed, its
    late ``bad-response`` ack must not be taken for the next, valid answer's reply."""
    import os
    import signal

    import dsh_cli.desk.web.desk as desk_module

    monkeypatch.setattr(desk_module, "ACK_WAIT", 1.0)

    async def scenario(desk, site):
        async with client("--wait", "20", name="agent-a") as agent:
            call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
            while len(desk.inbox) < 1:
                await asyncio.sleep(0.05)
            entry = desk.inbox.entries()[0]
            page_id, session = desk.feed.page_id(entry), entry.event["session_id"]
            os.kill(entry.link.pid, signal.SIGSTOP)
            try:
                late = await site.post("/api/respond", {
                    "type": "question/answer", "rpc_id": page_id, "session_id": session,
                    "answers": [{"id": "db", "selected": ["MySQL"]}]})
                good = asyncio.ensure_future(site.post("/api/respond", {
                    "type": "question/answer", "rpc_id": page_id, "session_id": session,
                    "answers": [{"id": "db", "selected": ["SQLite"]}]}))
                await asyncio.sleep(0.3)  # the valid answer waits while the server is stopped
            finally:
                os.kill(entry.link.pid, signal.SIGCONT)
            return late, await good, await call

    late, good, result = bounded(_with_desk(runtime_dir, scenario))
    assert late.status == 504 and "did not reply" in late.json()["message"]
    assert good.status == 200 and good.json()["accepted"] is True, good.body
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_a_tab_too_far_behind_is_ended_and_its_hold_let_go(at_agent):
    """A tab that reads nothing while more than ``DESK_QUEUED_EVENTS`` events come is ended
    (before: its queue grew without bound); what it held is free again at the server."""
    from harness.mcp_util import jsonl_desk

    from dsh_cli.core.limits import DESK_QUEUED_EVENTS

    agent, sockets = at_agent

    async def scenario(desk, site):
        async with jsonl_desk() as other:
            call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
            await other.event("question/requested")
            while len(desk.inbox) < 1:
                await asyncio.sleep(0.05)
            entry = desk.inbox.entries()[0]
            page_id = desk.feed.page_id(entry)
            tab = await _Tab(site).open()
            await tab.hold("desk/opened", page_id)
            while (await other.event("inbox/changed"))["change"] != "taken":
                pass
            for number in range(DESK_QUEUED_EVENTS + 10):
                desk.feed._send({"type": "question/resolved", "rpc_id": f"x{number}",
                                 "outcome": "answered"})
            queued = [queue.qsize() for queue in desk.feed._clients]
            freed = await other.event("inbox/changed")
            await tab.close()
            await site.post("/api/respond", {"type": "question/cancel", "rpc_id": page_id,
                                             "session_id": entry.event["session_id"]})
            await call
            return queued, freed

    queued, freed = bounded(_with_desk(sockets, scenario))
    assert queued == [], queued  # the tab's stream was ended, not kept growing
    assert freed["change"] == "free"
