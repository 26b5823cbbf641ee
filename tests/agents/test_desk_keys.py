"""The desk in a pseudo-terminal, answered by keys (issue 29).

Real ``claude -p`` (the quickest agent) asks through ``dsh mcp``; a real ``dsh attach`` on
a 100×30 pseudo-terminal shows the batch headed by the agent's name as people know it. A
digit answers it, and the scripted model finds the answer in the tool result it receives;
a second ``claude -p`` asks again, esc takes it back to the inbox and ``x`` dismisses it
there, and the model reads ASK_CANCELLED.
"""

from __future__ import annotations

import json
import os
import subprocess

import pexpect
import pytest
from agent_rig import BATCH, finish
from harness.dsh_under_test import DSH
from model_server import ModelServer

pytest.importorskip("pyte", reason="pyte (the test extra) reads the terminal's screen")
from harness.vt_screen import Screen, wait_for_screen  # after the skip

pytestmark = pytest.mark.pty

ROWS, COLUMNS = 30, 100
ESC = "\x1b"
PROMPT = "Ask me which database to use."
# The tool's text for "2. SQLite", as it arrives inside Claude Code's tool result.
ANSWERED = json.dumps({"answers": [{"id": "db", "selected": ["SQLite"]}]},
                      separators=(",", ":"))


def attach(dsh_home) -> pexpect.spawn:
    """``dsh attach`` (the terminal desk) on a pseudo-terminal, in the agents' DSH_HOME."""
    env = {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"}
    env.update(DSH_HOME=str(dsh_home), TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    return pexpect.spawn(DSH, ["attach"], env=env, encoding="utf-8",
                         dimensions=(ROWS, COLUMNS), timeout=30)


def asked(desk: pexpect.spawn, screen: Screen, agent: subprocess.Popen[str]) -> str:
    """The desk's screen once it shows the batch; fails with the agent's words if it ended."""
    try:
        wait_for_screen(desk, screen, "enter open", timeout=60)  # the inbox lists it
        desk.send("\r")  # enter opens it
        return wait_for_screen(desk, screen, "1. PostgreSQL", timeout=30)
    except AssertionError:
        if agent.poll() is not None:
            out, err = agent.communicate()
            pytest.fail(f"the agent ended ({agent.returncode}) before the desk showed its "
                        f"question:\n{out[-3000:]}\n{err[-3000:]}")
        raise


def test_claude_code_at_a_terminal_desk_answered_by_a_digit_then_cancelled_by_esc(
        make_agent, dsh_home):
    desk, screen = attach(dsh_home), Screen(ROWS, COLUMNS)
    process = None
    try:
        with ModelServer(call=("ask_user_question", BATCH)) as model:
            agent = make_agent("claude", model.url)
            agent.install("--wait", "20")
            process = agent.start(PROMPT)
            batch = asked(desk, screen, process)
            desk.send("2")  # SQLite; one single-choice question has no review screen
            answered = finish(process)
            wait_for_screen(desk, screen, "✓ Which database?: SQLite")
            process = agent.start(PROMPT)
            asked(desk, screen, process)
            desk.send(ESC)  # back to the inbox: still pending
            wait_for_screen(desk, screen, "↩ questions left in the inbox")
            desk.send("x")  # dismissed from the inbox: cancelled for the agent
            cancelled = finish(process)
    finally:
        desk.close(force=True)
        if process is not None and process.poll() is None:  # a failed wait left it asking
            process.kill()
            process.communicate()
    assert "Claude Code asks" in batch and "Which database?" in batch, batch
    assert answered[0] == 0 and cancelled[0] == 0, (answered[2], cancelled[2])
    results = model.results()
    assert len(results) == 2, results
    assert ANSWERED in results[0], results
    assert "ASK_CANCELLED" in results[1], results
