"""Model-written escape sequences (OSC 52 clipboard writes, screen clears, colours, 8-bit
CSI), bidi overrides, zero-width and Unicode tag characters never reach a terminal raw.

Each command runs with its terminal streams on a pseudo-terminal (so progress output and
prompts are on) and ``NO_COLOR`` set, so dsh itself writes no escape sequence: the bytes
the terminal receives must hold no ESC at all.
"""

from __future__ import annotations

import io
import json
import os

import pytest
from harness.dsh_under_test import DSH
from harness.hostile_text import (
    QUESTION,
    UNSAFE,
    assert_clean,
    on_a_terminal,
)


def test_dsh_run_progress_and_plain_prompts_on_stderr_hold_no_escape(script, tmp_path):
    status, terminal, stdout = on_a_terminal(
        ["run", "--plain", "--model", script, "go"], stdin="1\n", terminal=("stderr",),
        cwd=tmp_path)
    assert status == 0
    assert_clean(terminal)
    assert "ask redevilxz" in terminal and "Which? redevilxz" in terminal  # text kept
    assert "LPS" in terminal and "answered (1)" in terminal
    assert stdout.startswith("final ") and stdout.endswith("\n")


def test_dsh_ask_plain_prompts_hold_no_escape_and_the_label_comes_back_unaltered(tmp_path):
    (tmp_path / "request.json").write_text(json.dumps({"questions": [QUESTION]}))
    status, terminal, stdout = on_a_terminal(
        ["ask", "--plain", "request.json"], stdin="1\n", terminal=("stderr",), cwd=tmp_path)
    assert status == 0
    assert_clean(terminal)
    assert "Which? redevilxz" in terminal and "1. LPS — redevilxz" in terminal
    assert json.loads(stdout) == {"answers": [{"id": "db", "selected": ["\u202eLPS"]}]}


def test_dsh_chat_output_holds_no_escape(script, tmp_path):
    status, terminal, _ = on_a_terminal(
        ["chat", "--model", script], stdin="go\n1\n", terminal=("stdout", "stderr"),
        cwd=tmp_path)
    assert status == 0
    assert_clean(terminal)
    assert "ask redevilxz" in terminal and "final redevilxz" in terminal


@pytest.mark.pty
def test_dsh_ask_in_the_terminal_ui_shows_no_tag_character(tmp_path):
    import pexpect

    (tmp_path / "request.json").write_text(json.dumps({"questions": [QUESTION]}))
    env = dict(os.environ, NO_COLOR="1", TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(DSH, ["ask", "request.json"], env=env, cwd=str(tmp_path),
                          encoding="utf-8", dimensions=(40, 120), timeout=20)
    child.logfile_read = seen = io.StringIO()
    child.expect("Plain")
    child.send("1")
    child.expect(pexpect.EOF)
    child.close()
    received = seen.getvalue()
    for char in UNSAFE[1:]:  # ESC aside: the UI draws its frames with escape sequences
        assert char not in received, f"U+{ord(char):04X} reached the terminal: {received!r}"
    assert "Which? redevilxz" in received and "code redevilxz" in received
    assert '{"answers":[{"id":"db","selected":["\\u202eLPS"]}]}' in received
