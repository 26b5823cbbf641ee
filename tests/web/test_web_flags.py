"""`--web` on `dsh ask` and `dsh run`: the installed command answered over real HTTP."""

from __future__ import annotations

import http.client
import json
import re
import subprocess

from harness.dsh_under_test import DSH


class Browserless:
    """What a page does, over plain HTTP: log in, read the CSRF value, read events, respond."""

    def __init__(self, process: subprocess.Popen) -> None:
        line = process.stderr.readline()
        match = re.match(r"dsh: open http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        assert match, line
        self.port, self.token = int(match[1]), match[2]
        self.authority = f"127.0.0.1:{self.port}"
        self.cookie = self._log_in()
        page = self._request("GET", "/").decode()
        self.csrf = re.search(r'name="dsh-csrf" content="([^"]+)"', page)[1]

    def _log_in(self) -> str:
        """``GET /?token=``, as the printed URL does: the session cookie it sets."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", f"/?token={self.token}", headers={"Host": self.authority})
        response = connection.getresponse()
        response.read()
        connection.close()
        assert response.status == 303
        return response.getheader("set-cookie").split(";")[0]

    def _request(self, method, path, body=None, extra=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Host": self.authority, "Cookie": self.cookie, **(extra or {})}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        assert response.status < 400, (response.status, data)
        return data

    def first_question(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", "/api/events",
                           headers={"Host": self.authority, "Cookie": self.cookie})
        response = connection.getresponse()
        while True:
            line = response.fp.readline().decode()
            if line.startswith("data: ") and '"question/requested"' in line:
                connection.close()
                return json.loads(line[len("data: "):])

    def respond(self, body):
        return json.loads(self._request(
            "POST", "/api/respond", json.dumps(body).encode(),
            {"Origin": f"http://{self.authority}", "X-DSH-CSRF": self.csrf,
             "Content-Type": "application/json"}))


def start(*args):
    return subprocess.Popen([DSH, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_dsh_ask_web_prints_the_browser_answer_on_stdout():
    process = start("ask", "--web", "--no-open", "-q", "Deploy?", "-o", "yes", "-o", "no")
    try:
        page = Browserless(process)
        question = page.first_question()
        ack = page.respond({"type": "question/answer", "rpc_id": question["rpc_id"],
                            "session_id": question["session_id"],
                            "answers": [{"id": "q1", "selected": ["no"]}]})
        assert ack["accepted"] is True
        out, _ = process.communicate(timeout=10)
    finally:
        process.kill()
    assert process.returncode == 0
    assert json.loads(out) == {"answers": [{"id": "q1", "selected": ["no"]}]}


def test_dsh_ask_web_dismissed_is_exit_130():
    process = start("ask", "--web", "--no-open", "-q", "Deploy?", "-o", "yes")
    try:
        page = Browserless(process)
        question = page.first_question()
        assert page.respond({"type": "question/cancel", "rpc_id": question["rpc_id"]})["accepted"]
        out, err = process.communicate(timeout=10)
    finally:
        process.kill()
    assert process.returncode == 130 and out == ""
    assert err.strip().endswith("ASK_CANCELLED: the user cancelled the questions")


def test_dsh_run_web_answers_go_to_the_model():
    process = start("run", "--web", "--no-open", "-m", "demo", "plan it")
    try:
        page = Browserless(process)
        question = page.first_question()
        answers = [{"id": "stack", "selected": ["Go + chi"]}, {"id": "features", "selected": []},
                   {"id": "name", "selected": [], "custom": "webby"}]
        ack = page.respond({"type": "question/answer", "rpc_id": question["rpc_id"],
                            "session_id": question["session_id"], "answers": answers})
        assert ack["accepted"] is True
        out, _ = process.communicate(timeout=10)
    finally:
        process.kill()
    assert process.returncode == 0
    assert "Stack: Go + chi" in out and "Name: webby" in out
