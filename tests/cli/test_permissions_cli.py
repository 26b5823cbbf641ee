"""`dsh permissions`: every remembered "always" and trusted project, listed and undone."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from harness.dsh_under_test import DSH

from dsh_cli.core.remembered import Remembered
from dsh_cli.mcp_client.config.trust import ProjectTrust
from dsh_cli.permissions.approvals import Approvals, call_digest, definition_digest
from dsh_cli.permissions.vocabulary import PermissionRequest


def dsh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def home() -> Path:
    return Path(os.environ["DSH_HOME"])


def seed(project: Path) -> None:
    """One of each: an older tool-wide grant, an input grant, a definition grant, a project."""
    Remembered(home() / "permissions.json", "always").remember(
        "Bash", definition_digest(None, None, "Bash"))
    approvals = Approvals(home() / "permissions.json")
    call = PermissionRequest(tool="Bash", arguments={"command": "ls"},
                             agent="Claude Code\x1b[2J", scope="input", cwd=str(project))
    approvals.approve(call, call_digest(call.agent, "Bash", call.arguments, str(project)))
    tool = PermissionRequest(tool="mcp__notes__add_note", arguments={}, server="notes")
    approvals.approve(tool, definition_digest("notes", "Add a note", {}))
    ProjectTrust(home() / "trusted-projects.json").trust(project, "0" * 64)


def test_list_shows_every_grant_with_its_scope_and_says_how_to_undo(tmp_path):
    seed(tmp_path)
    listed, alone = dsh("permissions", "list"), dsh("permissions")
    assert listed.returncode == 0 and listed.stdout == alone.stdout
    lines = listed.stdout.splitlines()
    assert any("Bash for any input" in line and "no longer applied" in line for line in lines)
    assert any(f"Claude Code's Bash with input {{\"command\": \"ls\"}} in {tmp_path}" in line
               for line in lines)  # the escape sequence the name carried is not shown
    assert "\x1b" not in listed.stdout
    assert any("mcp__notes__add_note of server notes (this tool definition)" in line
               for line in lines)
    assert any(f"trusted project: {tmp_path}/.mcp.json" in line for line in lines)
    assert "dsh permissions rm ID" in listed.stdout


def test_list_json_and_rm_by_id_then_all(tmp_path):
    seed(tmp_path)
    grants = json.loads(dsh("permissions", "list", "--json").stdout)
    assert [(g["kind"], g["scope"]) for g in grants] == [
        ("always", "legacy"), ("always", "input"), ("always", "definition"),
        ("project", "file")]
    by_scope = {g["scope"]: g for g in grants}
    assert by_scope["input"]["agent"] == "Claude Code\x1b[2J"  # as stored, JSON-escaped
    assert by_scope["input"]["cwd"] == str(tmp_path)

    removed = dsh("permissions", "rm", by_scope["input"]["id"])
    assert removed.returncode == 0 and by_scope["input"]["id"] in removed.stdout
    saved = json.loads((home() / "permissions.json").read_text())
    assert sorted(saved["always"]) == ["Bash", "mcp__notes__add_note"]

    project = dsh("permissions", "rm", by_scope["file"]["id"][:4])  # a unique prefix
    assert project.returncode == 0
    assert json.loads((home() / "trusted-projects.json").read_text())["projects"] == {}

    everything = dsh("permissions", "rm", "--all", "--json")
    assert everything.returncode == 0
    assert len(json.loads(everything.stdout)["removed"]) == 2
    assert json.loads(dsh("permissions", "list", "--json").stdout) == []


def test_rm_of_an_unknown_id_or_nothing_is_one_line_and_keeps_everything(tmp_path):
    seed(tmp_path)
    before = (home() / "permissions.json").read_text()
    unknown = dsh("permissions", "rm", "ffffffff")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("dsh: GRANT_NOT_FOUND: ffffffff names no remembered")
    assert len(unknown.stderr.splitlines()) == 1
    neither = dsh("permissions", "rm")
    assert neither.returncode == 1 and neither.stderr.startswith("dsh: USAGE: ")
    both = dsh("permissions", "rm", "abcd", "--all")
    assert both.returncode == 1 and both.stderr.startswith("dsh: USAGE: ")
    assert (home() / "permissions.json").read_text() == before
