"""`dsh run` against a local OpenAI-compatible server: the installed command, a real socket."""

from __future__ import annotations

import json
import os
import subprocess

from fakes.openai_server import Reply
from harness.dsh_under_test import DSH

KEY = "sk-cli-test-9876543210fedcbaSECRET"
DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]}


def dsh_run(server, *args, key=KEY, timeout=30):
    env = {**os.environ}
    if key:
        env["DSH_API_KEY"] = key
    return subprocess.run(
        [DSH, "run", "--base-url", server.base_url, "-m", "some-model", *args],
        capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
    )


def assert_no_key_anywhere(result, dsh_home):
    assert KEY not in result.stdout and KEY not in result.stderr
    for path in dsh_home.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def assert_one_error_line(result, code):
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"dsh: {code}: ")
    assert "Traceback" not in result.stderr


def test_a_plain_answer_goes_to_stdout(server, dsh_home):
    server.enqueue(Reply.text("Hello from the model.", chunk_size=4))
    result = dsh_run(server, "say hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from the model.\n"
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "some-model"
    assert request.body["messages"][-1] == {"role": "user", "content": "say hello"}
    assert request.body["tools"][0]["function"]["name"] == "ask_user_question"
    assert_no_key_anywhere(result, dsh_home)


def test_a_question_is_answered_from_the_answers_file(server, dsh_home, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": ["SQLite"]}))
    server.enqueue(
        Reply.tool_calls([("ask_user_question", {"questions": [DB]}, "call_7")], chunk_size=5),
        Reply.text("Going with SQLite."),
    )
    result = dsh_run(server, "--answers", str(answers), "start a project")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Going with SQLite.\n"
    tool = server.requests[1].body["messages"][-1]
    assert tool == {"role": "tool", "tool_call_id": "call_7",
                    "content": '{"answers":[{"id":"db","selected":["SQLite"]}]}'}
    assert_no_key_anywhere(result, dsh_home)


def test_no_ask_sends_no_tools(server):
    server.enqueue(Reply.text("ok"))
    result = dsh_run(server, "--no-ask", "hi")
    assert result.returncode == 0, result.stderr
    assert "tools" not in server.requests[0].body


def test_a_rejected_key_is_one_line_and_exit_1(server, dsh_home):
    server.enqueue(Reply.error(401, f"Incorrect API key provided: {KEY}"))
    result = dsh_run(server, "hi")
    assert_one_error_line(result, "MODEL_AUTH")
    assert "HTTP 401" in result.stderr
    assert_no_key_anywhere(result, dsh_home)


def test_an_unknown_model_is_one_line_and_exit_1(server, dsh_home):
    server.enqueue(Reply.error(404, "model some-model does not exist"))
    result = dsh_run(server, "hi")
    assert_one_error_line(result, "MODEL_NOT_FOUND")
    assert_no_key_anywhere(result, dsh_home)


def test_a_stream_cut_mid_message_prints_no_answer(server, dsh_home):
    server.enqueue(Reply.text("partial answer", chunk_size=3, cut_after=3))
    result = dsh_run(server, "hi")
    assert_one_error_line(result, "MODEL_STREAM")
    assert_no_key_anywhere(result, dsh_home)


def test_without_a_key_the_model_is_never_called(server):
    result = dsh_run(server, "hi", key=None)
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and "DSH_API_KEY" in result.stderr
    assert server.requests == []
