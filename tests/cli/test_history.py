"""``dsh history`` and answer provenance, through real ``dsh run``, ``dsh mcp`` and a desk."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from datetime import datetime

from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, bounded, client, jsonl_desk

WAIT = 30
RECOMMENDED = "Python + FastAPI (Recommended)"  # the demo's recommended stack


def dsh(*args, input=None, env=None, timeout=WAIT):
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})},
                          stdin=None if input is not None else subprocess.DEVNULL)


def silent(*args, env=None):
    """Run ``dsh ARGS`` with a stdin that stays open and says nothing; (status, out, err)."""
    process = subprocess.Popen([DSH, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, **(env or {})})
    try:
        status = process.wait(timeout=WAIT)
        return status, process.stdout.read(), process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.stdin.close()


def history(*args):
    result = dsh("history", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def answers_file(tmp_path, name="acme"):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"stack": ["Go + chi"], "features": ["CI"], "name": name}))
    return str(path)


def test_an_answers_file_answer_is_kept_with_its_provenance_and_time(tmp_path):
    before = datetime.now().astimezone()
    result = dsh("run", "-m", "demo", "--answers", answers_file(tmp_path), "set up")
    assert result.returncode == 0, result.stderr
    [item] = history()
    assert item["answered_by"] == "answers file"
    assert item["status"] == "answered" and item["agent"] == "demo"
    assert datetime.fromisoformat(item["answered_at"]) >= before.replace(microsecond=0)
    assert [q["id"] for q in item["questions"]] == ["stack", "features", "name"]
    assert item["answer"]["answers"][0] == {"id": "stack", "selected": ["Go + chi"]}
    text = dsh("history")
    assert text.returncode == 0, text.stderr
    assert "answered by answers file" in text.stdout
    assert "  ? Which stack should the project use?\n    = Go + chi\n" in text.stdout
    assert '    = "acme"\n' in text.stdout


def test_plain_lines_are_kept_as_answered_by_plain():
    result = dsh("run", "--plain", "-m", "demo", "x", input="3\n2\nacme\n")
    assert result.returncode == 0, result.stderr
    [item] = history()
    assert item["answered_by"] == "plain" and item["status"] == "answered"


def test_a_jsonl_controller_answer_is_kept_as_answered_by_controller():
    process = subprocess.Popen([DSH, "run", "--jsonl", "-m", "demo", "x"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        for line in process.stdout:
            event = json.loads(line)
            if event["type"] == "question/requested":
                break
        process.stdin.write(json.dumps({
            "type": "question/answer", "rpc_id": event["rpc_id"],
            "session_id": event["session_id"],
            "answers": [{"id": "stack", "selected": ["Go + chi"]},
                        {"id": "features", "selected": []},
                        {"id": "name", "custom": "acme"}]}) + "\n")
        process.stdin.close()
        process.stdout.read()
        assert process.wait(timeout=WAIT) == 0
    finally:
        if process.poll() is None:
            process.kill()
    [item] = history()
    assert item["answered_by"] == "controller"
    assert item["rpc_id"] == event["rpc_id"] and item["session_id"] == event["session_id"]


def test_a_timeout_in_dsh_run_never_selects_the_recommended_option():
    """Lines never come: DSH_QUESTION_TIMEOUT ends the batch as timeout, with no answer."""
    status, out, err = silent("run", "--plain", "-m", "demo", "x",
                              env={"DSH_QUESTION_TIMEOUT": "1"})
    assert status == 0, err
    assert "timed out" in out and "FastAPI" not in out
    [item] = history()
    assert item["status"] == "timeout"
    assert item["answer"] is None and item["answered_by"] is None


def test_a_timeout_in_dsh_ask_is_exit_124_and_never_the_recommended_option(tmp_path):
    status, out, err = silent("ask", "--plain", "--timeout", "1", "-q", "Which database?",
                              "-o", "PostgreSQL (Recommended)", "-o", "SQLite")
    assert status == 124, err
    assert out == "" and "ASK_TIMEOUT" in err


def test_a_desk_answer_is_kept_as_answered_by_desk_with_the_agent_it_served():
    async def main():
        async with jsonl_desk() as desk, \
                client("--wait", "20", name="claude-code") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            await desk.answer(requested, [{"id": "db", "selected": ["SQLite"]}])
            await call
            await desk.event("question/resolved")
            return requested

    requested = bounded(main())
    [item] = history()
    assert item["answered_by"] == "desk" and item["agent"] == "mcp:Claude Code"
    assert item["rpc_id"] == requested["rpc_id"]
    assert history("--agent", "claude")[0]["rpc_id"] == requested["rpc_id"]
    assert history("--agent", "demo") == []


def test_a_desk_closed_mid_question_never_answers_it():
    """The desk goes away with the batch shown: it times out, the recommended option unsent."""
    async def main():
        async with jsonl_desk() as desk, \
                client("--wait", "20", "--question-timeout", "2") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            await desk.event("question/requested")
            await desk.close()
            return await call

    result = bounded(main())
    assert result.structured_content["error"]["code"] == "ASK_TIMEOUT"
    assert "PostgreSQL" not in json.dumps(result.structured_content)
    [item] = history()
    assert item["status"] == "timeout" and item["answer"] is None
    assert item["answered_by"] is None


def test_filters_and_sanitised_text(tmp_path):
    hostile = "ac\x1b[31mme\u202e\x07"
    assert dsh("run", "-m", "demo", "--answers", answers_file(tmp_path, hostile),
               "x").returncode == 0
    assert dsh("run", "--plain", "-m", "demo", "x", input="1\n/skip\nzeta\n").returncode == 0
    both = history()
    assert [item["answered_by"] for item in both] == ["answers file", "plain"]
    assert [item["answered_by"] for item in history("--grep", "ZETA")] == ["plain"]
    assert history("--grep", "no such text") == []
    first = both[0]["session_id"]
    assert [item["session_id"] for item in history("--session", first[:6])] == [first]
    assert [item["answered_by"] for item in history("-n", "1")] == ["plain"]
    text = dsh("history", "--session", first)
    assert text.returncode == 0, text.stderr
    assert "answered by answers file" in text.stdout and "by plain" not in text.stdout
    assert '    = "ac' in text.stdout
    assert not {"\x1b", "\u202e", "\x07"} & set(text.stdout)
    none = dsh("history", "--session", first, "--grep", "no such text")
    assert none.returncode == 0 and none.stdout == "" and none.stderr == "dsh: no questions match\n"


def test_plain_offers_the_last_answer_of_the_same_question_and_never_sends_it(tmp_path):
    """Second run: Go + chi is marked, an empty line is only a hint, the typed 2 wins."""
    assert dsh("run", "-m", "demo", "--answers", answers_file(tmp_path), "x").returncode == 0
    result = dsh("run", "--plain", "-m", "demo", "x", input="\n2\n/skip\nacme\n")
    assert result.returncode == 0, result.stderr
    first = history()[0]
    when = datetime.fromisoformat(first["answered_at"]).astimezone().strftime("%Y-%m-%d %H:%M")
    came = f"(last answer, {when} in {first['session_id']})"  # where it came from
    assert f"  3. Go + chi {came} — " in result.stderr
    assert f"  4. CI {came} — " in result.stderr
    assert "(Recommended) (last answer)" not in result.stderr
    assert "  type a number, text for Other, /skip, /back or /cancel\n" in result.stderr
    assert "Stack: Node.js + Express" in result.stdout
    assert [item["answered_by"] for item in history()] == ["answers file", "plain"]
    assert history()[1]["answer"]["answers"][0] == {"id": "stack",
                                                   "selected": ["Node.js + Express"]}


def test_history_json_escapes_what_would_not_show_into_a_pipe_and_a_file(tmp_path):
    """C1 controls, DEL, bidi and tag characters stored in an answer reach no output raw."""
    hostile = "ac\x9b31m\x9d0;pwned\x9c\u202eme\U000e0041\U000e0042\x7f\u2066x é 😀"
    assert dsh("run", "-m", "demo", "--answers", answers_file(tmp_path, hostile),
               "x").returncode == 0
    piped = dsh("history", "--json")
    assert piped.returncode == 0, piped.stderr
    written = tmp_path / "history.json"
    with written.open("w") as file:
        done = subprocess.run([DSH, "history", "--json"], stdout=file, timeout=WAIT,
                              stdin=subprocess.DEVNULL)
    assert done.returncode == 0
    raw = set("\x9b\x9d\x9c\u202e\U000e0041\U000e0042\x7f\u2066")
    for text in (piped.stdout, written.read_text(encoding="utf-8")):
        assert not raw & set(text), text
        [item] = json.loads(text)
        assert item["answer"]["answers"][2]["custom"] == hostile  # the same value
        assert "é 😀" in text  # what shows as itself stays readable
    shown = dsh("history")
    assert shown.returncode == 0 and not raw & set(shown.stdout)
