"""`dsh run` as scripts use it: the installed command in a subprocess, stdin closed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from harness.dsh_under_test import DSH


def dsh(*args, input=None, env=None, timeout=30):
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})},
                          stdin=None if input is not None else subprocess.DEVNULL)


def write(path, data):
    path.write_text(json.dumps(data))
    return str(path)


def test_demo_with_answers_file_prints_a_summary_of_exactly_those_answers(tmp_path):
    answers = write(tmp_path / "a.json",
                    {"stack": ["Node.js + Express"], "features": ["Billing", "Auth"],
                     "name": "acme"})
    result = dsh("run", "--model", "demo", "--answers", answers, "set up a project")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Stack: Node.js + Express" in out
    assert "Features: Auth, Billing" in out  # option order, not file order
    assert "Name: acme (your own answer)" in out
    assert "Go + chi" not in out and "Admin UI" not in out
    assert out.endswith("\n") and result.stderr == ""


def test_demo_with_skips_says_skipped(tmp_path):
    answers = write(tmp_path / "a.json", {"stack": None, "features": [], "name": None})
    result = dsh("run", "-m", "demo", "--answers", answers, "x")
    assert result.returncode == 0
    assert result.stdout.count("skipped") == 3


def test_no_answer_source_finishes_promptly_with_no_provider():
    started = time.monotonic()
    result = dsh("run", "--model", "demo", "set up a project", timeout=20)
    assert time.monotonic() - started < 10
    assert result.returncode == 0
    assert "NO_PROVIDER" in result.stdout


def test_missing_id_and_bad_answer_are_reported_on_stderr_and_the_run_succeeds(tmp_path):
    answers = write(tmp_path / "a.json", {"stack": ["Rust"], "features": []})
    result = dsh("run", "-m", "demo", "--answers", answers, "x")
    assert result.returncode == 0
    assert result.stderr.startswith("dsh: INVALID_ANSWER:")
    assert 'unknown label "Rust"' in result.stderr
    assert "did not fit" in result.stdout
    answers = write(tmp_path / "b.json", {"stack": ["Go + chi"]})
    result = dsh("run", "-m", "demo", "--answers", answers, "x")
    assert "dsh: NO_PROVIDER:" in result.stderr and "'features'" in result.stderr


@pytest.mark.parametrize("content", ["{broken", "[1, 2]", '{"stack": 5}'])
def test_unusable_answers_file_is_exit_2_with_one_line(tmp_path, content):
    path = tmp_path / "a.json"
    path.write_text(content)
    result = dsh("run", "-m", "demo", "--answers", str(path), "x")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert str(path) in result.stderr


def test_missing_answers_file_is_exit_2(tmp_path):
    result = dsh("run", "-m", "demo", "--answers", str(tmp_path / "nope.json"), "x")
    assert result.returncode == 2 and "cannot read answers file" in result.stderr


def test_a_model_needing_a_key_without_one_is_exit_1_and_never_falls_back():
    result = dsh("run", "hello")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("dsh: MISSING_API_KEY:")
    assert "Traceback" not in result.stderr


def test_no_ask_removes_the_tool():
    result = dsh("run", "-m", "demo", "--no-ask", "x")
    assert result.returncode == 0 and "questions are turned off" in result.stdout


def test_prompt_dash_reads_stdin():
    result = dsh("run", "-m", "demo", "--no-ask", "-", input="from a pipe\n")
    assert "from a pipe" in result.stdout


def test_prompt_dash_with_jsonl_is_a_usage_error():
    result = dsh("run", "-m", "demo", "--jsonl", "-", input="")
    assert result.returncode == 2 and "stdin has another job" in result.stderr


def test_prompt_dash_with_plain_and_no_terminal_at_all_is_a_usage_error():
    # a new session has no controlling terminal: no /dev/tty to read the answers from
    result = subprocess.run([DSH, "run", "-m", "demo", "--plain", "-"], input="x",
                            capture_output=True, text=True, timeout=30, start_new_session=True)
    assert result.returncode == 2
    assert "PROMPT '-' with --plain needs a terminal to read the answers from" in result.stderr


def test_no_prompt_is_a_usage_error():
    result = dsh("run", "-m", "demo")
    assert result.returncode == 2


def test_script_model_error_and_exhausted_script_are_exit_1(tmp_path):
    script = write(tmp_path / "s.json", {"turns": [{"error": "upstream exploded"}]})
    result = dsh("run", "-m", f"script:{script}", "x")
    assert result.returncode == 1 and "upstream exploded" in result.stderr
    script = write(tmp_path / "t.json", {"turns": [{"tool_calls": [{"name": "nope"}]}]})
    result = dsh("run", "-m", f"script:{script}", "x")
    assert result.returncode == 1 and "no turn 2" in result.stderr
    result = dsh("run", "-m", f"script:{tmp_path / 'missing.json'}", "x")
    assert result.returncode == 1 and "cannot read script" in result.stderr


def wait_for_user_message(home, timeout=10.0):
    """The run has started its turn (and so installed its signal handlers)."""
    import sqlite3

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(home / "sessions.db") as db:
                if db.execute("SELECT count(*) FROM messages WHERE role = 'user'").fetchone()[0]:
                    return
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    raise AssertionError("the run never started its turn")


def test_sigterm_while_the_model_streams_exits_143(tmp_path, dsh_home):
    words = " ".join(["w"] * 200)
    script = write(tmp_path / "s.json", {"delay": 0.2, "turns": [{"content": words}]})
    process = subprocess.Popen([DSH, "run", "-m", f"script:{script}", "x"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    wait_for_user_message(dsh_home)
    time.sleep(0.3)  # a few words into the stream
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 143, err
    assert "Traceback" not in err and out == ""


def test_python_dash_m_is_the_same_program():
    result = subprocess.run([sys.executable, "-m", "dsh_cli", "--version"],
                            capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("dsh, version")


def test_resuming_with_nothing_pending_and_no_prompt_is_a_usage_error(tmp_path):
    answers = write(tmp_path / "a.json", {"stack": None, "features": [], "name": None})
    assert dsh("run", "-m", "demo", "--answers", answers, "first").returncode == 0
    result = dsh("run", "-c")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("dsh: NOTHING_TO_RESUME: session s_")
    carried_on = dsh("run", "-c", "--no-ask", "and then?")
    assert carried_on.returncode == 0 and "and then?" in carried_on.stdout


def test_a_script_error_is_one_line_with_its_code(tmp_path):
    script = write(tmp_path / "s.json", {"turns": "none"})
    result = dsh("run", "-m", f"script:{script}", "x")
    assert result.returncode == 1
    assert result.stderr.startswith("dsh: SCRIPT_ERROR: ") and result.stderr.count("\n") == 1


def test_an_empty_answers_file_names_every_id_the_demo_asks(tmp_path):
    answers = write(tmp_path / "a.json", {})
    result = dsh("run", "-m", "demo", "--answers", answers, "x")
    assert result.returncode == 0
    line = next(line for line in result.stderr.splitlines() if "NO_PROVIDER" in line)
    for question_id in ("'stack'", "'features'", "'name'"):
        assert question_id in line
    assert '"Which stack should the project use?"' in line


@pytest.mark.parametrize(("args", "stdin", "said"), [
    (("",), None, "the prompt is empty: give a PROMPT (or '-' to read it from stdin)"),
    ((" ", "\n"), None, "the prompt is empty: give a PROMPT (or '-' to read it from stdin)"),
    (("-",), "", "the prompt read from stdin is empty"),  # `git diff | dsh run -`, clean tree
    (("-",), " \n\n", "the prompt read from stdin is empty"),
    (("-c", ""), None, "the prompt is empty: give a PROMPT (or '-' to read it from stdin)"),
])
def test_an_empty_prompt_is_one_line_and_exit_2_and_no_model_call(args, stdin, said):
    result = dsh("run", "-m", "demo", "--no-ask", *args, input=stdin)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"dsh: USAGE: {said}; nothing was sent to the model\n"
    listed = dsh("sessions", "list", "--json")
    assert json.loads(listed.stdout) == []  # no session was opened, no model was called
