"""The one ownership rule through the web: a real `dsh web` child, driven over HTTP on
127.0.0.1 as its page does, refuses every settling POST that names another session than
the batch's or the permission request's own (or none), settles nothing, and then takes the
one that names it (issue 36)."""

from __future__ import annotations

import http.client
import json
import queue
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from fakes import mcp_forms_server, mcp_notes_server
from harness.dsh_under_test import DSH
from harness.ownership_frames import foreign, refusals, settling

WAIT = 30
QUESTION = {"id": "db", "question": "Which database?",
            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
ANSWERS = [{"id": "db", "selected": ["SQLite"]}]
ARGUMENTS = {"ask_user_question": {"questions": [QUESTION]},
             "mcp__forms__deploy": {"service": "api"},
             "mcp__notes__write_note": {"text": "from the page"}}
# verb: (the tool the scripted model calls, the resolved event and its outcome)
CASES = {
    "answer": ("ask_user_question", ("question/resolved", "answered")),
    "cancel": ("ask_user_question", ("question/resolved", "cancelled")),
    "discuss": ("ask_user_question", ("question/resolved", "discuss")),
    "decline": ("mcp__forms__deploy", ("question/resolved", "declined")),
    "decision": ("mcp__notes__write_note", ("permission/resolved", "decided")),
    "permission cancel": ("mcp__notes__write_note", ("permission/resolved", "cancelled")),
}


class WebChat:
    """`dsh web` as a child: logged in as the printed URL does, its event feed read in a
    thread, frames POSTed with the page's cookie, Origin and CSRF value."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([DSH, "web", "--no-open", *args],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        match = re.match(r"dsh: open http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        assert match, line
        self.port, token = int(match[1]), match[2]
        self.authority = f"127.0.0.1:{self.port}"
        threading.Thread(target=self.process.stderr.read, daemon=True).start()
        status, headers, _ = self._request("GET", f"/?token={token}", {})
        assert status == 303
        self.cookie = headers["set-cookie"].split(";")[0]
        _, _, page = self._request("GET", "/", {"Cookie": self.cookie})
        self.csrf = re.search(rb'name="dsh-csrf" content="([^"]+)"', page)[1].decode()
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.unread: list[dict[str, Any]] = []
        threading.Thread(target=self._feed, daemon=True).start()

    def _request(self, method: str, path: str, headers: dict[str, str],
                 body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            connection.request(method, path, body=body,
                               headers={"Host": self.authority, **headers})
            response = connection.getresponse()
            return (response.status, {k.lower(): v for k, v in response.getheaders()},
                    response.read())
        finally:
            connection.close()

    def _feed(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT * 4)
        connection.request("GET", "/api/events",
                           headers={"Host": self.authority, "Cookie": self.cookie})
        response = connection.getresponse()
        try:
            for raw in response.fp:
                line = raw.decode()
                if line.startswith("data: "):
                    self.events.put(json.loads(line[len("data: "):]))
        except (OSError, ValueError):
            return  # the server stopped

    def until(self, kind: str) -> dict[str, Any]:
        """The next event of ``kind``; one read past while waiting for another stays to be
        found (a feed that connects late replays the pending request before the history)."""
        for index, event in enumerate(self.unread):
            if event["type"] == kind:
                return self.unread.pop(index)
        while True:
            event = self.events.get(timeout=WAIT)
            if event["type"] == kind:
                return event
            self.unread.append(event)

    def post(self, path: str, frame: dict[str, Any]) -> tuple[int, Any]:
        status, _, body = self._request("POST", path, {
            "Cookie": self.cookie, "Origin": f"http://{self.authority}",
            "X-DSH-CSRF": self.csrf, "Content-Type": "application/json"},
            json.dumps(frame).encode())
        return status, json.loads(body)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def web():
    started: list[WebChat] = []

    def start(*args: str) -> WebChat:
        started.append(WebChat(*args))
        return started[-1]

    yield start
    for each in started:
        each.stop()


SERVERS = {"mcp__forms__deploy": ("forms", mcp_forms_server),
           "mcp__notes__write_note": ("notes", mcp_notes_server)}


def chat_args(tmp_path: Path, tool: str) -> list[str]:
    """A scripted model that calls ``tool`` once, with the one MCP server it calls, if any
    (a server configured but never called is a child, and an SDK import, for nothing)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": tool, "arguments": ARGUMENTS[tool]}]}, {"content": "done"}]}))
    if tool not in SERVERS:
        return ["--model", f"script:{script}"]
    name, server = SERVERS[tool]
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {name: server.entry()}}))
    # the form's tool may run unasked, so its form is the one thing pending
    allow = ["--allow", tool] if name == "forms" else []
    return ["--model", f"script:{script}", "--mcp-config", str(servers), *allow]


@pytest.mark.parametrize("verb", CASES)
def test_a_post_for_another_session_settles_nothing_in_dsh_web(verb, web, tmp_path):
    tool, (resolved_type, outcome) = CASES[verb]
    page = web(*chat_args(tmp_path, tool))
    assert page.post("/api/message", {"content": "go"}) == (202, {"accepted": True})
    session_id = page.until("session/started")["session_id"]
    kind = resolved_type.replace("resolved", "requested")
    requested = page.until(kind)
    assert requested["session_id"] == session_id
    fields = {"answers": ANSWERS} if verb == "answer" else {}
    replies = [page.post("/api/respond", frame) for frame in foreign(verb, requested, **fields)]
    # the relay's ack, and the words the page shows of it (shown.py)
    assert replies == [(200, {**ack, "shown": {"error": f"Not accepted: {ack['message']}",
                                                   "at": None}})
                       for ack in refusals(requested)]
    assert page.post("/api/respond", settling(verb, requested, **fields)) == (
        200, {"type": "response/ack", "rpc_id": requested["rpc_id"], "accepted": True})
    resolved = page.until(resolved_type)
    assert (resolved["rpc_id"], resolved["outcome"]) == (requested["rpc_id"], outcome)
    if verb == "decision":
        assert resolved["decision"] == "allow_always"
    page.until("turn/completed")
