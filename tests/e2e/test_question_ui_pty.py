"""The question UI on a real pseudo-terminal: no raw echo, a cleared area, resize, run ctrl-c."""

from __future__ import annotations

import os
import re
import time

import pytest
from harness.dsh_under_test import DSH
from harness.pty_util import finish, spawn

pytestmark = [pytest.mark.pty,
              pytest.mark.skipif(DSH is None, reason="the dsh console script is not installed")]

ASK = "dsh ask -q Deploy? -o yes -o no"
YES = '{"answers":[{"id":"q1","selected":["yes"]}]}'


def wait_for(condition, timeout: float = 8.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


def test_ask_clears_its_area_on_exit_without_keep(tmp_path):
    child = spawn(f'{ASK}; echo "rc=$?"', str(tmp_path))
    child.expect("3. Other:")
    child.send("1")
    output = finish(child)
    assert YES in output and "rc=0" in output
    assert "✓" not in output, "the summary is left only with --keep"
    assert "\x1b[J" in output[:output.index(YES)]  # the frame is erased before the answer


def test_keys_typed_before_the_ui_is_drawn_are_not_echoed_and_are_discarded(tmp_path):
    fifo = tmp_path / "request.json"
    os.mkfifo(fifo)
    child = spawn(f'dsh ask {fifo}; echo "rc=$?"', str(tmp_path))
    wait_for(lambda: not child.getecho())  # dsh has started: echo is off already
    child.send("2\x1b[A")  # typed ahead, before there is anything to answer
    time.sleep(0.2)
    with open(fifo, "w", encoding="utf-8") as request:  # now the question arrives
        request.write('{"questions":[{"id":"q1","question":"Deploy?","options":'
                      '[{"label":"yes"},{"label":"no"}]}]}')
    child.expect("3. Other:")
    before_ui = child.before
    child.send("1")
    output = finish(child)
    visible = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", before_ui)  # what the screen shows
    assert "\x1b[A" not in before_ui and "^[" not in visible
    assert "2" not in visible.split("Deploy?")[0]
    assert YES in output and "rc=0" in output  # the typed-ahead 2 did not pick "no"
    assert child.exitstatus == 0


def test_terminal_settings_are_restored_after_echo_off(tmp_path):
    command = f'stty -a > before; {ASK} > /dev/null; stty -a > after; echo done'
    child = spawn(command, str(tmp_path))
    child.expect("3. Other:")
    child.send("1")
    child.expect("done")
    finish(child)
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()


def test_ctrl_c_at_a_run_question_interrupts_the_run_with_130(tmp_path):
    child = spawn("dsh run -m demo 'plan it'; echo STATUS=$?", str(tmp_path))
    child.expect("Which stack")
    child.send("\x03")
    child.expect(r"STATUS=(\d+)")
    status = child.match.group(1)
    finish(child)
    assert status == "130"


def test_esc_at_a_run_question_cancels_the_batch_and_the_model_carries_on(tmp_path):
    child = spawn("dsh run -m demo 'plan it'; echo STATUS=$?", str(tmp_path))
    child.expect("Which stack")
    child.send("\x1b")
    child.expect(r"STATUS=(\d+)")
    status = child.match.group(1)
    output = child.before
    finish(child)
    assert status == "0", output
    assert "cancel" in output.lower()
