"""``dsh mcp install``, for a newcomer: what a teammate can run, whether the agent is there,
and the instructions-file line that has an agent with its own question tool ask through dsh.

Run for real: the ``dsh`` child with HOME and the working directory the test's own, PATH
chosen per test; the question on a terminal is asked in a pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

MARKER = "`ask_user_question` tool of the `dsh` MCP server"
FILES = {"claude": (".claude/CLAUDE.md", "CLAUDE.md", "AskUserQuestion"),
         "codex": (".codex/AGENTS.md", "AGENTS.md", "request_user_input"),
         "gemini": (".gemini/GEMINI.md", "GEMINI.md", "ask_user")}


@pytest.fixture
def where(tmp_path):
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    for folder in (home, project, bin_dir):
        folder.mkdir()
    return home, project, bin_dir


def environment(where, *, dsh_on_path: bool = True, programs: tuple[str, ...] = ()):
    """HOME the test's; PATH with (or without) this dsh and with fake agent programs."""
    home, _, bin_dir = where
    for name in programs:
        program = bin_dir / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    folders = [str(bin_dir), *([str(Path(DSH).parent)] if dsh_on_path else []), "/usr/bin",
               "/bin"]
    env = {key: value for key, value in os.environ.items() if key != "XDG_CONFIG_HOME"}
    env.update(HOME=str(home), PATH=os.pathsep.join(folders))
    return env


def install(where, *args: str, **options) -> subprocess.CompletedProcess[str]:
    _, project, _ = where
    return subprocess.run([DSH, "mcp", "install", *args], cwd=project,
                          env=environment(where, **options), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def test_a_projects_file_names_dsh_when_the_dsh_on_path_is_this_one(where):
    done = install(where, "gemini", "--scope", "project")
    assert done.returncode == 0, done.stderr
    _, project, _ = where
    entry = json.loads((project / ".gemini" / "settings.json").read_text())["mcpServers"]["dsh"]
    assert entry["command"] == "dsh"  # what a teammate's PATH finds
    assert "this machine's path" not in done.stdout


def test_without_dsh_on_path_a_projects_file_names_this_machines_path_and_says_so(where):
    done = install(where, "claude", "--scope", "project", dsh_on_path=False)
    assert done.returncode == 0, done.stderr
    _, project, _ = where
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["dsh"]
    assert os.path.isabs(entry["command"])
    (said,) = [line for line in done.stdout.splitlines() if "this machine's path" in line]
    assert entry["command"] in said


def test_the_user_scope_keeps_the_absolute_path(where):
    done = install(where, "gemini")
    assert done.returncode == 0, done.stderr
    home, _, _ = where
    entry = json.loads((home / ".gemini" / "settings.json").read_text())["mcpServers"]["dsh"]
    assert entry["command"] == os.path.abspath(DSH)


@pytest.mark.parametrize(("agent", "program"), [("claude", "claude"), ("vscode", "code")])
def test_install_says_when_the_agent_is_not_installed(where, agent, program):
    missing = install(where, agent)
    assert missing.returncode == 0, missing.stderr
    assert f"is not installed here (no `{program}` on PATH)" in missing.stdout
    there = install(where, agent, programs=(program,))
    assert "not installed" not in there.stdout


@pytest.mark.parametrize("agent", sorted(FILES))
def test_without_a_terminal_the_line_is_shown_and_nothing_is_written(where, agent):
    home, _, _ = where
    done = install(where, agent, programs=(agent,))
    assert done.returncode == 0, done.stderr
    user_file, _, own_tool = FILES[agent]
    assert not (home / user_file).exists()
    (hint,) = [line for line in done.stdout.splitlines() if MARKER in line]
    assert str(home / user_file) in hint and own_tool in hint and "--instructions" in hint


@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize("agent", sorted(FILES))
def test_instructions_adds_the_line_once_and_keeps_the_files_text(where, agent, scope):
    home, project, _ = where
    user_file, project_file, own_tool = FILES[agent]
    path = home / user_file if scope == "user" else project / project_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# My rules\n\nUse tabs.")  # no newline at the end
    done = install(where, agent, "--scope", scope, "--instructions")
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert text.startswith("# My rules\n\nUse tabs.\n\n")
    (line,) = [line for line in text.splitlines() if MARKER in line]
    assert own_tool in line
    assert f"in {path} delete the line about the dsh MCP server" in done.stdout
    again = install(where, agent, "--scope", scope, "--instructions")
    assert again.returncode == 0, again.stderr
    assert path.read_text() == text  # never twice
    assert f"{path} already has" in again.stdout
    asked = install(where, agent, "--scope", scope)
    assert MARKER not in asked.stdout  # nor shown again


def test_no_instructions_writes_nothing_and_shows_nothing(where):
    home, _, _ = where
    done = install(where, "codex", "--no-instructions")
    assert done.returncode == 0, done.stderr
    assert MARKER not in done.stdout
    assert not (home / ".codex" / "AGENTS.md").exists()


def test_agents_without_a_question_tool_of_their_own_get_no_line(where):
    done = install(where, "cursor", "--instructions")
    assert done.returncode == 0, done.stderr
    assert MARKER not in done.stdout


def test_a_projects_instructions_link_out_of_the_project_is_refused_in_one_line(where, tmp_path):
    _, project, _ = where
    outside = tmp_path / "elsewhere.md"
    outside.write_text("theirs\n")
    (project / "CLAUDE.md").symlink_to(outside)
    done = install(where, "claude", "--scope", "project", "--instructions")
    assert done.returncode == 0, done.stderr  # the agent's config is written all the same
    assert done.stderr.count("\n") == 1 and "outside the project" in done.stderr
    assert outside.read_text() == "theirs\n"


def test_the_try_it_line_runs_the_installed_agent(where):
    missing = install(where, "codex")
    assert "try it" not in missing.stdout  # nothing to try without the agent
    done = install(where, "codex", programs=("codex",))
    (trial,) = [line for line in done.stdout.splitlines() if line.startswith("try it")]
    assert "dsh attach" in trial and "codex exec" in trial and "ask_user_question" in trial


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
@pytest.mark.parametrize("answer", ["y", "n"])
def test_on_a_terminal_it_asks_first_and_never_twice(where, answer):
    import pexpect

    home, project, _ = where
    env = environment(where, programs=("claude",))
    path = home / ".claude" / "CLAUDE.md"

    def run() -> pexpect.spawn:
        return pexpect.spawn(DSH, ["mcp", "install", "claude"], cwd=str(project), env=env,
                             encoding="utf-8", timeout=60, dimensions=(40, 200))

    child = run()
    child.expect("has a question tool of its own")
    child.expect(r"add it\? \[y/N\]")
    assert not path.exists()  # never without asking
    child.sendline(answer)
    child.expect("try it")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    if answer == "n":
        assert not path.exists()
        return
    assert MARKER in path.read_text()
    again = run()
    again.expect("already has Claude Code ask through dsh")
    again.expect(pexpect.EOF)
    again.close()
    assert "add it?" not in (again.before or "")


@pytest.mark.parametrize("agent", sorted(FILES))
def test_the_readme_gives_the_line_install_writes(where, agent):
    """The README's table row for AGENT holds, word for word, the line install adds."""
    from harness.dsh_under_test import ROOT

    home, _, _ = where
    done = install(where, agent, "--instructions")
    assert done.returncode == 0, done.stderr
    user_file, project_file, own_tool = FILES[agent]
    (written,) = [line for line in (home / user_file).read_text().splitlines() if MARKER in line]
    rows = [row for row in (ROOT / "README.md").read_text().splitlines()
            if row.startswith("| ") and f"`{own_tool}`" in row and MARKER in row]
    assert len(rows) == 1, f"the README has no row for {agent}'s instructions line"
    assert f"| {written} |" in rows[0]
    assert f"`~/{user_file}`; `{project_file}`" in rows[0]
