"""`--help` reads as a newcomer needs it: commands before chat's options, then examples."""

from __future__ import annotations

import re
import subprocess

import pytest
from harness.dsh_under_test import DSH


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


def commands_section(text: str) -> dict[str, str]:
    """``Commands:`` rows of a help text: name -> its summary, wrapped lines joined."""
    rows: dict[str, str] = {}
    section = text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    name = ""
    for line in section.splitlines():
        if line[2] != " ":
            name, _, rest = line.strip().partition(" ")
            rows[name] = rest.strip()
        else:
            rows[name] += " " + line.strip()
    return rows


def test_dsh_help_lists_the_everyday_commands_first_and_help_last():
    rows = commands_section(help_of())
    names = list(rows)
    assert names[:4] == ["chat", "demo", "run", "ask"]
    assert names[-1] == "help" and "dsh help run" in rows["help"]
    assert names.index("mcp") < names.index("attach") < names.index("sessions")


@pytest.mark.parametrize("group", ["mcp", "sessions", "permissions"])
def test_a_groups_help_keeps_each_summary_whole(group):
    rows = commands_section(help_of(group))
    assert "list" in rows
    for name, text in rows.items():
        assert not text.endswith("..."), f"dsh {group} {name}: {text!r}"
        assert text.endswith("."), f"dsh {group} {name}: {text!r}"
    if group == "sessions":
        assert list(rows) == ["list", "show", "rm"]


def test_every_document_a_help_text_names_exists():
    """A help text that sends the reader to a file names one this repository has."""
    from pathlib import Path

    from click.testing import CliRunner

    from dsh_cli.cli import main

    root = Path(__file__).resolve().parents[2]
    texts = {path: CliRunner().invoke(main, [*path.split(), "--help"]).output
             for path in ("", "attach", "mcp", "run", "ask", "web", "chat", "mcp install")}
    for path, text in texts.items():
        # this repository's documents (an agent's own CLAUDE.md or AGENTS.md is not one)
        for name in re.findall(r"[\w./-]+\.md\b", text):
            if name.split("/")[-1].isupper() or name.split("/")[-1][:-3].isupper():
                continue
            assert (root / name).is_file() or (root / "docs" / name).is_file(), (
                f"`dsh {path} --help` names {name}, which does not exist")
    assert "docs/internals.md" in " ".join(texts["attach"].split())
