"""``dsh web`` and an async question: the turn ends with the batch on the page; answering it
over HTTP while the chat is idle starts a turn that gets the answer as a message."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json

from harness.web_site import Site

from dsh_cli.cli.web import web_main

SCRIPT = {"turns": [
    {"tool_calls": [{"id": "ask", "name": "ask_user_question", "arguments": {
        "questions": [{"id": "db", "question": "Which database later?",
                       "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}],
        "delivery": "async"}}]},
    {"content": "Working on the rest."},
    {"content": "Got it: SQLite."},
]}


async def _until(site: Site, test) -> list[dict]:
    for _ in range(300):
        events = await site.events()
        if test(events):
            return events
        await asyncio.sleep(0.02)
    raise AssertionError("the page never saw it")


def test_an_async_answer_on_the_page_while_idle_starts_a_turn(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    stderr = io.StringIO()

    async def main():
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        options = {"model": f"script:{script}", "host": "127.0.0.1", "port": 0,
                   "open_browser": False}
        task = asyncio.ensure_future(web_main(options, stderr=stderr, started=ready.set_result))
        host = await ready
        site = Site(host, host.ui, stderr)
        assert (await site.post("/api/message", {"content": "start"})).status == 202
        events = await _until(site, lambda es: any(e["type"] == "turn/completed" for e in es)
                              and any(e["type"] == "question/requested" for e in es))
        (requested,) = [e for e in events if e["type"] == "question/requested"]
        assert requested["delivery"] == "async"
        ack = await site.post("/api/respond", {
            "type": "question/answer", "rpc_id": requested["rpc_id"],
            "session_id": requested["session_id"],
            "answers": [{"id": "db", "selected": ["SQLite"]}]})
        assert ack.json()["accepted"] is True
        events = await _until(site, lambda es: sum(e["type"] == "turn/completed"
                                                   for e in es) == 2)
        finals = [e["content"] for e in events if e["type"] == "assistant/message"
                  and e["content"]]
        assert finals == ["Working on the rest.", "Got it: SQLite."]
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return host

    host = asyncio.run(main())
    del host
