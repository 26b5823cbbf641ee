"""``dsh acp --web``: a client without forms has its batches answered in the browser page."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
from typing import Any

from harness.acp_client import DB, WAIT, ask, prompt_turn, run, script, started

URL = re.compile(rb"dsh: open http://127\.0\.0\.1:(\d+)/\?token=(\S+)")


class Page:
    """What the browser page does, over plain HTTP: log in, read events, respond."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.authority = port, f"127.0.0.1:{port}"
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        connection.request("GET", f"/?token={token}", headers={"Host": self.authority})
        response = connection.getresponse()
        response.read()
        connection.close()
        assert response.status == 303
        self.cookie = response.getheader("set-cookie").split(";")[0]
        page = self._request("GET", "/").decode()
        self.csrf = re.search(r'name="dsh-csrf" content="([^"]+)"', page)[1]

    def _request(self, method: str, path: str, body: bytes | None = None,
                 extra: dict[str, str] | None = None) -> bytes:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        connection.request(method, path, body=body,
                           headers={"Host": self.authority, "Cookie": self.cookie,
                                    **(extra or {})})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        assert response.status < 400, (response.status, data)
        return data

    def first_question(self) -> dict[str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        connection.request("GET", "/api/events",
                           headers={"Host": self.authority, "Cookie": self.cookie})
        response = connection.getresponse()
        try:
            while line := response.fp.readline().decode():
                if line.startswith("data: ") and '"question/requested"' in line:
                    return json.loads(line[len("data: "):])
            raise AssertionError("the event stream ended before a question")
        finally:
            connection.close()

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        return json.loads(self._request(
            "POST", "/api/respond", json.dumps(body).encode(),
            {"Origin": f"http://{self.authority}", "X-DSH-CSRF": self.csrf,
             "Content-Type": "application/json"}))


async def _page(process: Any) -> Page:
    """The page whose URL the child printed on stderr (stdout is the ACP wire)."""
    while True:
        line = await asyncio.wait_for(process.stderr.readline(), WAIT)
        assert line, "dsh acp ended without printing the page's URL"
        match = URL.search(line)
        if match:
            return await asyncio.to_thread(Page, int(match[1]), match[2].decode())


@run
async def test_a_client_without_forms_is_answered_in_the_browser_with_web(tmp_path):
    model = script(tmp_path, ask(DB), {"content": "SQLite it is"})
    async with started("-m", model, "--web", "--no-open", form=False) as (conn, client,
                                                                        process):
        session = await conn.new_session(cwd=str(tmp_path))
        page = await _page(process)
        turn = prompt_turn(conn, session.session_id)
        question = await asyncio.to_thread(page.first_question)
        assert [q["id"] for q in question["questions"]] == ["db"]
        ack = await asyncio.to_thread(page.respond, {
            "type": "question/answer", "rpc_id": question["rpc_id"],
            "session_id": question["session_id"],
            "answers": [{"id": "db", "selected": ["SQLite"]}]})
        assert ack["accepted"] is True
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        assert client.forms.empty()
        result = [u for u in client.of("tool_call_update") if "status" in u][-1]
        assert result["status"] == "completed"
        assert '"selected":["SQLite"]' in result["content"][0]["content"]["text"]
        assert client.text() == "SQLite it is"


def test_web_and_answers_together_are_a_usage_error(tmp_path):
    import subprocess

    from harness.dsh_under_test import DSH

    answers = tmp_path / "answers.json"
    answers.write_text("{}")
    done = subprocess.run([DSH, "acp", "-m", "demo", "--web", "--no-open", "--answers",
                           str(answers)], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=WAIT)
    assert done.returncode == 2
    assert done.stdout == ""  # the ACP wire carries nothing but ACP
    assert "use --web or --answers, not both" in done.stderr


@run
async def test_a_fixed_port_serves_one_session_at_a_time_and_says_so(tmp_path):
    import socket

    from acp import RequestError

    with socket.socket() as probe:  # a port free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with started("-m", "demo", "--web", "--no-open", "--port", str(port),
                       form=False) as (conn, _, process):
        first = await conn.new_session(cwd=str(tmp_path))
        assert (await _page(process)).port == port
        try:
            await conn.new_session(cwd=str(tmp_path))
        except RequestError as error:
            assert error.data["code"] == "WEB_BIND_FAILED"
            assert f"127.0.0.1:{port}" in error.data["details"]
        else:
            raise AssertionError("a second page on a held port was not refused")
        await conn.close_session(session_id=first.session_id)  # the port is let go
        await conn.new_session(cwd=str(tmp_path))
        assert (await _page(process)).port == port
