"""Bugs: `dsh run` prints the final message raw on a terminal, and altered (click strips
CSI codes) on a pipe; `dsh ask` prints bidi controls raw in its JSON on a terminal.
Copy next to tests/hardening/test_hostile_text.py to run (uses its helpers)."""

from __future__ import annotations

import json

from harness.hostile_text import EVIL, QUESTION, assert_clean, on_a_terminal


def test_dsh_run_final_message_on_a_terminal_is_sanitised(script, tmp_path):
    status, terminal, _ = on_a_terminal(
        ["run", "--answers", "answers.json", "--model", script, "go"], stdin="",
        terminal=("stdout", "stderr"), cwd=_answers(tmp_path))
    assert status == 0
    assert_clean(terminal)
    assert "final redevilxz" in terminal


def test_dsh_run_final_message_on_a_pipe_is_exact(script, tmp_path):
    status, _, stdout = on_a_terminal(
        ["run", "--answers", "answers.json", "--model", script, "go"], stdin="",
        terminal=("stderr",), cwd=_answers(tmp_path))
    assert status == 0
    assert stdout == "final " + EVIL + "\n"


def test_dsh_ask_json_on_a_terminal_escapes_bidi_controls(tmp_path):
    (tmp_path / "request.json").write_text(json.dumps({"questions": [QUESTION]}))
    (tmp_path / "answers.json").write_text(json.dumps({"db": ["\u202eLPS"]}))
    status, terminal, _ = on_a_terminal(
        ["ask", "--answers", "answers.json", "request.json"], stdin="",
        terminal=("stdout", "stderr"), cwd=tmp_path)
    assert status == 0
    assert_clean(terminal)
    assert json.loads(terminal) == {"answers": [{"id": "db", "selected": ["\u202eLPS"]}]}


def _answers(tmp_path):
    (tmp_path / "answers.json").write_text(json.dumps({"db": ["Plain"]}))
    return tmp_path
