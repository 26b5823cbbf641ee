"""``dsh web``: a browser chat over the runtime; messages in, events and questions out."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json

from harness.web_site import Site

from dsh_cli.cli.web import web_main
from dsh_cli.sources.surroundings import browser_available

SCRIPT = {"turns": [
    {"content": "Let me ask.", "tool_calls": [{"name": "ask_user_question", "arguments": {
        "questions": [{"id": "db", "question": "Which database?",
                       "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}}]},
    {"content": "Done: SQLite it is."},
]}


def test_a_message_runs_a_turn_whose_question_is_answered_over_http(tmp_path):
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
        assert (await site.post("/api/message", {"content": "set up a db"})).status == 202
        (requested,) = [e for e in await _until(site, "question/requested")
                        if e["type"] == "question/requested"]
        ack = await site.post("/api/respond", {
            "type": "question/answer", "rpc_id": requested["rpc_id"],
            "session_id": requested["session_id"],
            "answers": [{"id": "db", "selected": ["SQLite"]}]})
        assert ack.json()["accepted"] is True
        events = await _until(site, "turn/completed")
        kinds = [e["type"] for e in events]
        # a fresh connection gets the transcript so far, questions excluded
        assert kinds[:3] == ["session/started", "user/message", "assistant/message"]
        assert "question/requested" not in kinds
        finals = [e["content"] for e in events if e["type"] == "assistant/message"]
        assert finals == ["Let me ask.", "Done: SQLite it is."]
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert stderr.getvalue().count("dsh: open http://127.0.0.1:") == 1
    assert "ctrl-c to stop" in stderr.getvalue()  # how to stop it, as `python -m http.server` says


async def _until(site: Site, kind: str) -> list[dict]:
    """Reconnect until the replayed transcript holds an event of ``kind``."""
    for _ in range(200):
        events = await site.events()  # the replay, up to its replay/done marker
        if any(e["type"] == kind for e in events):
            return events
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {kind}")


def test_open_defaults_to_a_display_being_there(monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    assert browser_available({"DISPLAY": ":0"}) is True
    assert browser_available({"WAYLAND_DISPLAY": "wayland-0"}) is True
    assert browser_available({}) is False
