"""`--help` reads as a newcomer needs it: commands before chat's options, then examples."""

from __future__ import annotations

import subprocess

from dsh_under_test import DSH


def help_of(*args: str) -> str:
    done = subprocess.run([DSH, *args, "--help"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_dsh_help_shows_the_commands_first_and_ends_on_examples():
    text = help_of()
    assert text.index("Commands:") < text.index("Options:") < text.index("Examples:")
    assert "dsh mcp install claude" in text.split("Examples:")[1]


def test_run_help_puts_the_answer_sources_before_the_model_options():
    text = help_of("run")
    options = text.split("Options:")[1]
    for source in ("--answers", "--jsonl", "--plain"):
        assert options.index(source) < options.index("--model")
    assert "git diff | dsh run -" in text.split("Examples:")[1]
