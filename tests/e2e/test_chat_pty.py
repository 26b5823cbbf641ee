"""The installed ``dsh chat`` in a pseudo-terminal: keys in, the conversation out."""

from __future__ import annotations

import json
import os
import signal

import pexpect
import pytest
from harness.dsh_under_test import DSH

pytestmark = pytest.mark.pty


def spawn(*args: str):
    # No CPR: pexpect does not answer cursor-position requests, a real terminal does.
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(DSH, ["chat", *args], env=env, encoding="utf-8",
                          dimensions=(40, 100), timeout=10)
    child.expect("›")  # the prompt
    return child


def test_the_demo_asks_inline_and_summarises_then_ctrl_d_exits_0():
    child = spawn("--model", "demo")
    child.send("plan a shop\r")
    child.expect("Question 1/3")
    child.send("1")  # single-select: picks the (recommended) first option and advances
    child.expect("several allowed")
    child.send("1")
    child.send("3")
    child.send("\r")  # multi-select: confirms Auth and Admin UI
    child.expect("type an answer")
    child.send("acme\r")
    child.expect("enter submit")  # the review screen of a batch
    child.send("\r")
    child.expect("· ask_user_question → answered \\(3\\)")
    child.expect("- Stack: Python \\+ FastAPI\r\n- Features: Auth, Admin UI\r\n"
                 "- Name: acme \\(your own answer\\)")
    child.expect("›")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_c_stops_a_streaming_reply_and_sigterm_exits_143(tmp_path):
    script = tmp_path / "slow.json"
    words = " ".join(f"word{n}" for n in range(200))
    script.write_text(json.dumps({"delay": 0.05, "turns": [
        {"content": words}, {"content": "second reply"}]}))
    child = spawn("--model", f"script:{script}")
    child.send("go\r")
    child.expect("word1 ")
    child.sendcontrol("c")
    child.expect("\\(turn cancelled\\)")
    assert "word199" not in child.before
    child.expect("›")  # back at the prompt, and the chat goes on
    child.send("again\r")
    child.expect("second reply")
    child.expect("›")
    child.kill(signal.SIGTERM)
    child.expect(pexpect.EOF)
    assert "\x1b[?2004l" in child.before  # the prompt put the terminal back
    child.close()
    assert child.exitstatus == 143


@pytest.mark.parametrize("columns", [100, 60, 40])
def test_the_session_header_fits_or_breaks_between_words(columns):
    from harness.vt_screen import Screen, wait_for_screen

    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(DSH, ["chat", "--model", "demo"], env=env, encoding="utf-8",
                          dimensions=(24, columns), timeout=10)
    screen = Screen(24, columns)
    text = wait_for_screen(child, screen, "›", timeout=10)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    header = text[: text.index("ctrl-d to exit") + len("ctrl-d to exit")].splitlines()
    assert len(header) == (1 if columns == 100 else 2 if columns == 60 else 3), header
    for phrase in ("/help for commands", "ctrl-d to exit", "model demo"):
        assert any(phrase in row for row in header), (phrase, header)  # never cut in two
    assert all(len(row) < columns for row in header), header


def test_ctrl_t_leaves_the_questions_to_discuss_them_and_the_model_gets_ask_discuss(tmp_path):
    import subprocess

    from harness.vt_screen import Screen, wait_for_screen

    questions = {"questions": [
        {"id": "db", "header": "Database", "question": "Which database should we use?",
         "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]},
        {"id": "name", "question": "What should the project be called?"}]}
    script = tmp_path / "discuss.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "ask_user_question", "arguments": questions}]},
        {"content": "Sure: what would you like to talk about?"},
        {"content": "Both work; SQLite is one file."}]}))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(DSH, ["chat", "--model", f"script:{script}"], env=env,
                          encoding="utf-8", dimensions=(30, 100), timeout=10)
    screen = Screen(30, 100)
    wait_for_screen(child, screen, "›", timeout=10)
    child.send("set up the service\r")
    wait_for_screen(child, screen, "ctrl-t discuss", timeout=10)  # taught in the hint line
    child.send("2")  # a half-answered batch is left as it is
    child.sendcontrol("t")
    text = wait_for_screen(child, screen, "Sure: what would you like", timeout=10)
    assert "questions left to discuss:" in text
    assert "· Which database should we use?" in text  # the questions stay in view
    assert "· What should the project be called?" in text
    assert "ASK_DISCUSS" in text
    wait_for_screen(child, screen, "›", timeout=10)
    child.send("why not SQLite?\r")
    wait_for_screen(child, screen, "Both work; SQLite is one file.\n›", timeout=10)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    listed = subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                            text=True, env=env, check=True).stdout
    (session,) = json.loads(listed)
    session_id = session["id"]
    shown = subprocess.run([DSH, "sessions", "show", session_id, "--json"], env=env,
                           capture_output=True, text=True, check=True).stdout
    messages = json.loads(shown)["messages"]
    (result,) = [m for m in messages if m["role"] == "tool"]
    assert json.loads(result["content"]) == {"error": {
        "name": "UserInteractionError", "code": "ASK_DISCUSS",
        "message": "the user wants to discuss these questions before answering; "
                   "wait for their message"}}
    assert messages[-2] == {"role": "user", "content": "why not SQLite?"}
