"""An async question in ``dsh chat`` on a real pseudo-terminal: drawn when the turn ends,
left pending with ctrl-t, drawn again with f2 (the typed line kept), answered: the model
gets it as a message and the chat goes on."""

from __future__ import annotations

import json
import os

import pexpect
import pytest
from harness.dsh_under_test import DSH

pytestmark = pytest.mark.pty

ASK = {"questions": [{"id": "db", "question": "Which database later?",
                      "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}],
       "delivery": "async"}
F2 = "\x1bOQ"


def test_async_batch_waits_for_the_turn_end_ctrl_t_leaves_it_f2_brings_it_back(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"id": "ask", "name": "ask_user_question", "arguments": ASK}]},
        {"content": "working on it"},
        {"content": "noted the answer"},
        {"content": "and abc too"}]}))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(DSH, ["chat", "--model", f"script:{script}"], env=env,
                          encoding="utf-8", dimensions=(40, 100), timeout=10)
    try:
        child.expect("›")
        child.send("start\r")
        child.expect("working on it")  # the reply first: nothing drawn while it streams
        child.expect("Which database later\\?")
        child.sendcontrol("t")  # leave it pending
        child.expect("1 async question pending: /answer \\(or f2\\)")
        child.expect("›")
        child.send("abc")
        child.send(F2)
        child.expect("Which database later\\?")
        child.send("2")  # SQLite: a one-question batch is done
        child.expect("settled: the model is told")
        child.expect("noted the answer")
        child.expect("› abc")  # the line typed before f2 is back
        child.send("\r")
        child.expect("and abc too")
        child.expect("›")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
