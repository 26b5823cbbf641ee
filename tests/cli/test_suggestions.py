"""A mistyped command or option gets a suggestion worth taking; `dsh help` is help."""

from __future__ import annotations

import subprocess

import pytest
from harness.dsh_under_test import DSH


def dsh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_a_mistyped_command_names_the_one_meant():
    done = dsh("sesions")
    assert done.returncode == 2
    assert "did you mean `dsh sessions`?" in done.stderr


def test_a_prompt_typed_as_a_command_says_how_to_ask_the_agent():
    done = dsh("what is 2+2")
    assert done.returncode == 2
    assert "`dsh run 'what is 2+2'`" in done.stderr and "type it at the prompt" in done.stderr


@pytest.mark.parametrize(("typed", "meant"), [("--hots", "--host"), ("--answer", "--answers")])
def test_a_close_option_is_suggested(typed, meant):
    done = dsh("run", typed, "x")
    assert done.returncode == 2 and f"Did you mean '{meant}'?" in done.stderr


def test_a_far_option_gets_no_misleading_suggestion():
    done = dsh("run", "--bogus", "x")
    assert done.returncode == 2
    assert "No such option '--bogus'." in done.stderr and "Did you mean" not in done.stderr


def test_dsh_help_is_the_help_of_dsh_or_of_a_command():
    assert dsh("help").stdout == dsh("--help").stdout
    assert dsh("help", "mcp", "list").stdout == dsh("mcp", "list", "--help").stdout
    unknown = dsh("help", "nope")
    assert unknown.returncode == 2 and "no such command 'nope'" in unknown.stderr
