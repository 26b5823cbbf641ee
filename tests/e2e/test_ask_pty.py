"""`dsh ask` on a real pseudo-terminal: answer, cancel, capture, SIGTERM and timeout restore."""

from __future__ import annotations

import os
import re
import signal

import pytest
from harness.dsh_under_test import DSH
from harness.pty_util import finish, spawn

pytestmark = [pytest.mark.pty,
              pytest.mark.skipif(DSH is None, reason="the dsh console script is not installed")]

ASK = "dsh ask -q Deploy? -o yes -o no"
NO = '{"answers":[{"id":"q1","selected":["no"]}]}'


def test_answer_with_a_digit_prints_the_json_and_keep_leaves_a_summary(tmp_path):
    child = spawn(f'{ASK} --keep; echo "rc=$?"', str(tmp_path))
    child.expect("3. Other:")
    child.send("2")
    output = finish(child)
    assert NO in output and "rc=0" in output
    assert "✓ Deploy?: no" in output


def test_esc_cancels_with_status_130_and_one_error_line(tmp_path):
    child = spawn(f'{ASK}; echo "rc=$?"', str(tmp_path))
    child.expect("3. Other:")
    child.send("\x1b")
    output = finish(child)
    assert "rc=130" in output
    assert "dsh: ASK_CANCELLED: the user cancelled the questions" in output
    assert '{"answers"' not in output


def test_command_substitution_captures_only_the_answer(tmp_path):
    child = spawn(f'a=$({ASK}); echo "GOT:$a"', str(tmp_path))
    child.expect("3. Other:")  # drawn on /dev/tty although stdout is a pipe
    child.send("\x1b[B\r")
    output = finish(child)
    assert re.search(r"GOT:(.*)\r\n", output).group(1) == NO


def test_term_dumb_asks_in_plain_lines_on_dev_tty_when_stdio_is_redirected(tmp_path):
    child = spawn(f'a=$(TERM=dumb {ASK} < /dev/null 2> err); echo "GOT:$a"', str(tmp_path))
    child.expect(r"answer \(numbers")  # the line rendering, on /dev/tty
    child.sendline("2")
    output = finish(child)
    assert re.search(r"GOT:(.*)\r\n", output).group(1) == NO
    assert "\x1b[" not in output.split("GOT:")[0]  # no cursor addressing on a dumb terminal
    assert (tmp_path / "err").read_text() == ""


def test_sigterm_mid_question_restores_the_terminal_and_exits_143(tmp_path):
    command = ('stty -a > before; (echo "PID:$BASHPID"; exec dsh ask -q Deploy? -o yes -o no '
               '--keep); echo "rc=$?"; stty -a > after')
    child = spawn(command, str(tmp_path))
    child.expect(r"PID:(\d+)")
    pid = int(child.match.group(1))
    child.expect("3. Other:")
    os.kill(pid, signal.SIGTERM)
    output = finish(child)
    assert "rc=143" in output
    assert "dsh: ASK_ABORTED: interrupted by SIGTERM" in output
    assert "✗ questions aborted" in output
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()


def test_timeout_exits_124_with_the_terminal_restored(tmp_path):
    command = f'stty -a > before; {ASK} --timeout 1 --keep; echo "rc=$?"; stty -a > after'
    child = spawn(command, str(tmp_path))
    child.expect("left")  # the countdown
    output = finish(child)
    assert "rc=124" in output and "dsh: ASK_TIMEOUT: the question timed out" in output
    assert "✗ questions timed out" in output
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()


def test_keys_echoed_before_dsh_starts_do_not_push_the_first_frame_aside(tmp_path):
    from harness.vt_screen import Screen, wait_for_screen

    # the pause lets the terminal echo "2" before dsh runs and can turn echo off
    child = spawn(f"sleep 0.5; {ASK}", str(tmp_path))
    child.send("2")
    screen = Screen()
    text = wait_for_screen(child, screen, "3. Other:")
    child.send("\x1b")
    finish(child)
    first = next(row for row in text.splitlines() if "Deploy?" in row)
    assert first == " Deploy?", text  # column 0 of a clean line, the echoed "2" erased
    assert "2" not in text.split("Deploy?")[0], text
