"""`dsh run` on a terminal: questions drawn on stderr, the answer alone on stdout."""

from __future__ import annotations

import time

import pytest
from harness.dsh_under_test import DSH
from harness.pty_util import finish, spawn

pytestmark = pytest.mark.pty


def test_run_asks_on_the_terminal_and_keeps_stdout_for_the_final_answer(tmp_path):
    out = tmp_path / "out.txt"
    child = spawn(f"dsh run -m demo 'plan it' > {out}; echo STATUS=$?", str(tmp_path))
    child.expect("Which stack")
    # Screens are redrawn by difference, so later text may never appear whole: keys are
    # sent in order and the batch is judged by what reaches stdout.
    for keys in ("3", "1", "4", "\r", "tty-app", "\r", "\r"):  # last enter: review
        child.send(keys)
        time.sleep(0.15)
    child.expect("STATUS=0")
    finish(child)
    answer = out.read_text()
    assert "Stack: Go + chi" in answer and "Features: Auth, CI" in answer
    assert "Name: tty-app" in answer
    assert "\x1b" not in answer, "stdout carries only the final text"


def test_a_prompt_on_stdin_has_its_questions_asked_on_dev_tty(tmp_path):
    """`echo … | dsh run -` in a terminal: stdin holds the prompt, the keyboard is /dev/tty."""
    out = tmp_path / "out.txt"
    child = spawn(f"echo 'plan it' | dsh run -m demo - > {out}; echo STATUS=$?", str(tmp_path))
    child.expect("Which stack")
    for keys in ("3", "1", "\r", "piped-app", "\r", "\r"):
        child.send(keys)
        time.sleep(0.15)
    child.expect("STATUS=0")
    finish(child)
    answer = out.read_text()
    assert "Stack: Go + chi" in answer and "Name: piped-app" in answer


def test_plain_with_a_prompt_on_stdin_reads_its_answers_from_dev_tty(tmp_path):
    child = spawn("echo 'plan it' | dsh run --plain -m demo -; echo STATUS=$?", str(tmp_path))
    child.expect(r"answer \(numbers")
    child.sendline("2")
    child.expect(r"answer \(numbers")
    child.sendline("/skip")
    child.expect(r"answer \(")
    child.sendline("plain-app")
    child.expect("STATUS=0")
    output = child.before
    finish(child)
    assert "Stack: Node.js + Express" in output and "Name: plain-app" in output


def test_term_dumb_uses_the_plain_line_rendering(tmp_path):
    child = spawn("TERM=dumb dsh run -m demo 'plan it'; echo STATUS=$?", str(tmp_path))
    child.expect(r"answer \(numbers")
    child.sendline("2")
    child.expect(r"answer \(numbers")
    child.sendline("/skip")
    child.expect(r"answer \(")
    child.sendline("dumb-app")
    child.expect("STATUS=0")
    output = child.before
    finish(child)
    assert "Stack: Node.js + Express" in output and "Name: dumb-app" in output


def test_sigint_after_a_terminal_question_still_stops_the_run_with_130(tmp_path):
    import json
    import os
    import signal

    import pexpect

    words = " ".join(f"w{n}" for n in range(300))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"delay": 0.02, "turns": [
        {"tool_calls": [{"name": "ask_user_question", "arguments": {"questions": [
            {"id": "go", "question": "Go on?", "options": [{"label": "yes"}]}]}}]},
        {"content": words}]}))
    env = dict(os.environ, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(DSH, ["run", "-m", f"script:{script}", "go"], env=env,
                          cwd=str(tmp_path), encoding="utf-8", timeout=8, dimensions=(24, 80))
    child.expect("Go on")
    child.send("1")
    child.expect("answered")  # the tool line: the batch is closed, the next reply streams
    time.sleep(0.5)  # well inside the 6 s the reply takes
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130, child.before
    assert "w299" not in child.before
