"""`dsh run --plain` and `dsh ask --plain`: answers piped in as lines, prompts on stderr."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from harness.dsh_under_test import DSH

PROMPT = "answer (numbers, text for Other, /skip, /back, /cancel)> "


def dsh(*args, input="", timeout=20):
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


# -- dsh run --plain -----------------------------------------------------------------------

def test_run_plain_answers_from_piped_lines_and_prints_only_the_reply():
    result = dsh("run", "--plain", "--model", "demo", "set up a project",
                 input="3\n2, 4 2\nacme\n")
    assert result.returncode == 0, result.stderr
    assert "Stack: Go + chi" in result.stdout
    assert "Features: Billing, CI" in result.stdout
    assert "Name: acme (your own answer)" in result.stdout
    assert PROMPT not in result.stdout and "[Stack]" not in result.stdout
    assert "[Stack] Which stack should the project use?\n" in result.stderr
    assert "  1. Python + FastAPI (Recommended) — Typed, async, batteries included\n" \
        in result.stderr
    assert "Which features should the starter include? (several allowed)\n" in result.stderr
    assert "\x1b" not in result.stderr  # no cursor tricks, no color


def test_run_plain_bad_lines_get_hints_on_stderr_then_skip_and_back_work():
    lines = ["", "9", "1 2", "2", "/back", "/skip", "/skip", "/skip"]
    result = dsh("run", "--plain", "-m", "demo", "x", input="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert "  type a number, text for Other, /skip, /back or /cancel\n" in result.stderr
    assert "  there is no option 9: choose 1-3, or type text for Other\n" in result.stderr
    assert "  this question takes one answer: type a single number\n" in result.stderr
    assert result.stdout.count("skipped") == 3  # /back returned to the stack question


def test_run_plain_cancel_is_a_tool_error_and_the_run_succeeds():
    result = dsh("run", "--plain", "-m", "demo", "x", input="1\n/cancel\n")
    assert result.returncode == 0
    assert "dismissed" in result.stdout


def test_run_plain_end_of_input_aborts_the_batch_and_the_run_succeeds():
    result = dsh("run", "--plain", "-m", "demo", "x", input="1\n")
    assert result.returncode == 0
    assert "interrupted" in result.stdout


def test_run_plain_with_prompt_from_stdin_is_a_usage_error():
    result = dsh("run", "--plain", "-m", "demo", "-", input="hello\n")
    assert result.returncode == 2 and result.stdout == ""


# -- dsh ask --plain -----------------------------------------------------------------------

ASK = ("ask", "--plain", "-q", "Deploy now?", "-o", "yes", "-o", "no (Recommended)")


def test_ask_plain_prints_the_answer_json_and_prompts_on_stderr():
    result = dsh(*ASK, input="2\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "answers": [{"id": "q1", "selected": ["no (Recommended)"]}]}
    assert result.stderr.startswith("Deploy now?\n  1. yes\n  2. no (Recommended)\n" + PROMPT)


def test_ask_plain_other_text_with_format_lines():
    result = dsh(*ASK, "--format", "lines", input="\nlater today\n")
    assert result.returncode == 0
    assert result.stdout == "later today\n"
    assert "  type a number" in result.stderr


def test_ask_plain_multi_select():
    result = dsh("ask", "--plain", "--multi", "-q", "Which?", "-o", "a", "-o", "b", "-o", "c",
                 "--format", "lines", input="3 1 3\n")
    assert result.returncode == 0
    assert result.stdout == "a\nc\n"


def test_ask_plain_skip_is_success_with_nothing_selected():
    result = dsh(*ASK, input="/skip\n")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"answers": [{"id": "q1", "selected": []}]}


@pytest.mark.parametrize(("lines", "status", "code"), [
    ("/cancel\n", 130, "ASK_CANCELLED"),
    ("", 1, "ASK_ABORTED"),
    ("\n\n", 1, "ASK_ABORTED"),
])
def test_ask_plain_failures_leave_stdout_empty(lines, status, code):
    result = dsh(*ASK, input=lines)
    assert result.returncode == status
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith(f"dsh: {code}: ")


def test_ask_plain_end_of_input_says_input_closed():
    result = dsh(*ASK, input="")
    assert result.stderr.splitlines()[-1] == "dsh: ASK_ABORTED: input closed"


def test_ask_plain_with_request_from_stdin_is_a_usage_error():
    result = dsh("ask", "--plain", "-", input='{"questions": []}')
    assert result.returncode == 2 and result.stdout == ""


def test_back_shows_the_answer_given_and_an_empty_line_keeps_it():
    result = dsh("run", "--plain", "-m", "demo", "x", input="3\n/back\n\n2, 4\nacme\n")
    assert result.returncode == 0, result.stderr
    assert "  (your answer: Go + chi; enter keeps it)\n" in result.stderr
    assert "Stack: Go + chi" in result.stdout  # kept, not lost to the empty line
    assert "Features: Billing, CI" in result.stdout and "Name: acme" in result.stdout
