"""``dsh mcp``'s process is wired in ``mcp_server/process.py``; the command parses options."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.dsh_under_test import DSH

CLI = Path(__file__).resolve().parents[2] / "dsh_cli" / "cli" / "mcp.py"


def test_a_bad_answers_file_is_one_line_and_status_2_before_anything_is_served(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text("[1, 2]")
    done = subprocess.run([DSH, "mcp", "--answers", str(answers)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""  # stdout is the agent's: nothing but MCP messages
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dsh: ANSWERS_FILE_ERROR: ")
    assert str(answers) in lines[0]


def test_the_command_wires_nothing_itself():
    source = CLI.read_text(encoding="utf-8")
    for name in ("DeskHub", "AskService", "UserInteraction", "build_server", "SessionStore",
                 "PermissionGate", "WebHost", "AnswersFileProvider"):
        assert name not in source, f"cli/mcp.py builds {name}: that is mcp_server/process.py's"
