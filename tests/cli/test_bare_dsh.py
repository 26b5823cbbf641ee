"""The bare `dsh` is `dsh chat`, options and all."""

from __future__ import annotations

import subprocess

from harness.dsh_under_test import DSH


def dsh(*args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=60, start_new_session=True)


def test_bare_dsh_takes_model_and_plain():
    result = dsh("-m", "demo", "--plain", input="/exit\n")
    assert result.returncode == 0, result.stderr
    assert "model demo" in result.stdout
    assert "offline demo model" not in result.stderr  # -m named it: no fallback notice


def test_bare_dsh_takes_system_and_no_ask():
    result = dsh("--plain", "-m", "demo", "-s", "be brief", "--no-ask", input="/exit\n")
    assert result.returncode == 0, result.stderr


def test_chat_options_before_another_command_are_a_usage_error():
    result = dsh("-m", "demo", "schema")
    assert result.returncode == 2
    assert "chat options go after a command" in result.stderr
