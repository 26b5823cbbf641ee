"""``dsh attach --web`` over HTTP, no browser: the rules of ``dsh web`` and the routing.

The desk runs in the test's loop; the servers it follows are real ``dsh mcp`` processes.
"""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp_server"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from mcp_util import BATCH, bounded, client
from web_site import Site

from dsh_cli.desk.web import WebDesk
from dsh_cli.providers.web.app import CSP


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

    from dsh_under_test import DSH

    for args, said in ((["--web", "--plain"], "cannot be combined"),
                       (["--web", "--jsonl"], "cannot be combined"),
                       (["--port", "8765"], "--port needs --web")):
        run = subprocess.run([DSH, "attach", *args], capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
        assert run.returncode == 2, args
        assert said in run.stderr, (args, run.stderr)


def test_a_taken_port_is_one_line_and_exit_2(runtime_dir):
    import socket
    import subprocess

    from dsh_under_test import DSH

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
        runtime_dir):
    """A ``dsh attach --jsonl`` desk opens the entry: the web desk's list says taken; the
    page opens it in turn, and the other desk hears it (``desk/opened`` via the server)."""
    from mcp_util import jsonl_desk

    async def scenario(desk, site):
        async with jsonl_desk() as other, client("--wait", "20", name="agent-a") as agent:
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
            held = await site.post("/api/respond", {"type": "desk/opened", "rpc_id": page_id})
            assert held.json()["accepted"] is True
            change = await other.event("inbox/changed")
            while change["change"] != "taken":
                change = await other.event("inbox/changed")
            await site.post("/api/respond", {"type": "question/cancel", "rpc_id": page_id,
                                             "session_id": requested["session_id"]})
            return await call

    result = bounded(_with_desk(runtime_dir, scenario))
    assert result.structured_content["error"]["code"] == "ASK_CANCELLED"
