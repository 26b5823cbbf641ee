"""``dsh mcp install`` against the files a user really has: links, FIFOs, their own values,
escapes and numbers ``json`` would change, each run as a child with a HOME of its own.

What Claude Code does with the file it reads back is checked with its own parser: Node's
``JSON.parse``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

FIFO_CEILING = 20  # seconds; install that opens a FIFO blocking waits for a writer forever


@pytest.fixture
def where(tmp_path):
    """A HOME, a project directory, and a folder outside both (the user's dotfiles)."""
    home, project, dots = tmp_path / "home", tmp_path / "project", tmp_path / "dots"
    for folder in (home, project, dots):
        folder.mkdir()
    return home, project, dots


def install(where, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    home, project, _ = where
    environ = {name: value for name, value in os.environ.items()
               if name not in ("XDG_CONFIG_HOME", "DSH_HOME")}
    return subprocess.run([DSH, "mcp", "install", *args], cwd=project,
                          env={**environ, "HOME": str(home), **env},
                          capture_output=True, text=True, timeout=FIFO_CEILING)


def refused(done: subprocess.CompletedProcess[str], path: Path, why: str) -> None:
    """One ``dsh: CONFIG_ERROR`` line naming the file, exit 2, nothing said on stdout."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr == f"dsh: CONFIG_ERROR: {path} {why}; nothing was written\n"


def files_under(*roots: Path) -> set[Path]:
    return {path for root in roots for path in root.rglob("*")
            if path.is_symlink() or not path.is_dir()}  # FIFOs and links too


def node_parse(path: Path) -> object:
    """The file as Claude Code (Node) reads it: JSON.parse, re-serialised for Python."""
    node = shutil.which("node")
    assert node, "node is needed: the tests drive Claude Code with it (.ci/run installs it)"
    script = ("const fs = require('fs'); const v = JSON.parse(fs.readFileSync(process.argv[1], "
              "'utf8')); process.stdout.write(JSON.stringify(v, (k, x) => "
              "typeof x === 'number' && !isFinite(x) ? 'INF' : x))")
    done = subprocess.run([node, "-e", script, str(path)], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- links ------------------------------------------------------------------------------

def test_a_linked_claude_json_is_written_through_the_link(where):
    home, _, dots = where
    target = dots / "claude.json"
    target.write_text('{"userID": "mine", "projects": {}}\n')
    target.chmod(0o600)
    (home / ".claude.json").symlink_to(target)
    done = install(where, "claude")
    assert done.returncode == 0, done.stderr
    link = home / ".claude.json"
    assert link.is_symlink() and os.readlink(link) == str(target)  # the link stays a link
    written = json.loads(target.read_text())
    assert written["userID"] == "mine"
    assert written["mcpServers"]["dsh"]["args"] == ["mcp"]
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in dots.iterdir()) == ["claude.json"]  # no temporary left
    assert f"dsh: wrote {link} (through the link to {target}): " in done.stdout


def test_a_linked_directory_of_the_users_is_written_through(where):
    home, _, dots = where
    (dots / "claude").mkdir()
    (home / ".claude").symlink_to(dots / "claude")
    done = install(where, "claude")
    assert done.returncode == 0, done.stderr
    assert (home / ".claude").is_symlink()
    settings = json.loads((dots / "claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["mcp__dsh__ask_user_question",
                                                "mcp__dsh__get_user_answer"]


def test_a_dangling_link_is_refused(where):
    home, _, dots = where
    (home / ".claude.json").symlink_to(dots / "gone.json")
    done = install(where, "claude")
    refused(done, home / ".claude.json", f"is a link to {dots / 'gone.json'}, which does not exist")
    assert files_under(home, dots) == {home / ".claude.json"}


def test_a_project_file_linked_out_of_the_project_is_refused(where):
    _, project, dots = where
    outside = dots / "other-mcp.json"
    secret = '{"mcpServers": {"work": {"command": "work-mcp", "env": {"TOKEN": "s3cret"}}}}\n'
    outside.write_text(secret)
    (project / ".mcp.json").symlink_to(outside)
    done = install(where, "claude", "--scope", "project")
    refused(done, project / ".mcp.json", f"is a link to {outside}, outside the project {project}")
    assert outside.read_text() == secret
    assert files_under(project) == {project / ".mcp.json"}  # nothing written into the project
    assert (project / ".mcp.json").is_symlink()


def test_a_project_directory_linked_out_of_the_project_is_refused(where):
    _, project, dots = where
    (project / ".claude").symlink_to(dots)
    done = install(where, "claude", "--scope", "project")
    refused(done, project / ".claude" / "settings.json",
            f"is a link to {dots / 'settings.json'}, outside the project {project}")
    assert files_under(dots) == set()
    assert not (project / ".mcp.json").exists()


def test_a_project_link_inside_the_project_is_written_through(where):
    _, project, _ = where
    (project / "config").mkdir()
    (project / "config" / "mcp.json").write_text('{"mcpServers": {}}')
    (project / ".mcp.json").symlink_to(Path("config") / "mcp.json")
    done = install(where, "claude", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert (project / ".mcp.json").is_symlink()
    assert "dsh" in json.loads((project / "config" / "mcp.json").read_text())["mcpServers"]


# --- what is not a regular file ---------------------------------------------------------

@pytest.mark.parametrize("which", [".claude.json", ".claude/settings.json"])
def test_a_fifo_is_refused_without_waiting_for_a_writer(where, which):
    home, _, _ = where
    path = home / which
    path.parent.mkdir(exist_ok=True)
    os.mkfifo(path)
    done = install(where, "claude")  # a blocking open would hang here until FIFO_CEILING
    refused(done, path, "is a FIFO, not a regular file")
    assert files_under(home) == {path}  # not even the other file


def test_a_directory_at_the_path_is_refused(where):
    home, _, _ = where
    (home / ".claude.json").mkdir()
    refused(install(where, "claude"), home / ".claude.json", "is a directory, not a regular file")


# --- the user's own values --------------------------------------------------------------

USERS_OWN = {
    "claude": (".claude.json", "json", ("mcpServers", "dsh"),
               {"command": "/opt/my/dsh", "args": ["mcp", "--wait", "60"], "timeout": 120000}),
    "gemini": (".gemini/settings.json", "json", ("mcpServers", "dsh"),
               {"command": "/opt/my/dsh", "args": ["mcp", "--wait", "60"], "timeout": 120000,
                "trust": False}),
    "opencode": (".config/opencode/opencode.json", "json", ("mcp", "dsh"),
                 {"type": "local", "command": ["/opt/my/dsh", "mcp"], "timeout": 120000}),
    "codex": (".codex/config.toml", "toml", ("mcp_servers", "dsh"),
              {"command": "/opt/my/dsh", "args": ["mcp", "--wait", "60"],
               "tool_timeout_sec": 120, "required": False}),
}


FILLED = {"claude": {"type"}, "gemini": set(), "opencode": {"enabled"},
          "codex": {"startup_timeout_sec", "tools"}}


@pytest.mark.parametrize("agent", sorted(USERS_OWN))
def test_the_users_own_values_under_the_server_stay(where, agent):
    home, _, _ = where
    relative, form, keys, mine = USERS_OWN[agent]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if form == "toml":
        path.write_text("[mcp_servers.dsh]\n" + "".join(
            f"{key} = {json.dumps(value)}\n" for key, value in mine.items()))
    else:
        path.write_text(json.dumps({keys[0]: {keys[1]: mine}}))
    done = install(where, agent)
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    entry = (tomllib.loads(text) if form == "toml" else json.loads(text))[keys[0]][keys[1]]
    for key, value in mine.items():
        assert entry[key] == value, key
        if (agent, key) == ("opencode", "type"):
            continue  # dsh's own value too: nothing to report
        assert f"dsh: kept your {'.'.join(keys)}.{key} = {json.dumps(value)} in {path}" \
            in done.stdout
    # what the user left unset is dsh's: filled in
    assert set(entry) - set(mine) == FILLED[agent]


def test_the_users_own_permission_for_the_tool_stays(where):
    home, _, _ = where
    path = home / ".config" / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"permission": {"dsh_ask_user_question": "ask"}}')
    assert install(where, "opencode").returncode == 0
    assert json.loads(path.read_text())["permission"] == {"dsh_ask_user_question": "ask",
                                                          "dsh_get_user_answer": "allow"}


# --- what json would have changed -------------------------------------------------------

def test_a_lone_surrogate_is_kept_and_both_files_are_written(where):
    home, _, _ = where
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"statusLine": {"text": "\\ud83d half"}, "key\\udc00": 1}\n')
    done = install(where, "claude")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    text = settings.read_text(encoding="utf-8")
    assert '"text": "\\ud83d half"' in text and '"key\\udc00": 1' in text  # the same escapes
    value = node_parse(settings)
    assert isinstance(value, dict) and value["permissions"]["allow"] == [
        "mcp__dsh__ask_user_question", "mcp__dsh__get_user_answer"]
    assert "dsh" in json.loads((home / ".claude.json").read_text())["mcpServers"]


NUMBERS = {"big": "1e400", "upper": "1E5", "minus_zero": "-0", "tenth": "0.1",
           "long": "123456789012345678901234567890", "fine": "0.30000000000000004",
           "exp": "2.5e-7", "neg": "-1.50"}


def test_numbers_are_written_back_as_they_were_written(where):
    home, _, _ = where
    path = home / ".claude.json"
    path.write_text("{" + ", ".join(f'"{key}": {text}' for key, text in NUMBERS.items()) + "}")
    done = install(where, "claude")
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    for key, number in NUMBERS.items():
        assert f'"{key}": {number},' in text, key
    assert "Infinity" not in text
    parsed = node_parse(path)  # Claude Code reads it back
    assert isinstance(parsed, dict) and parsed["tenth"] == 0.1


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_constant_json_parse_refuses_is_refused(where, constant):
    home, _, _ = where
    path = home / ".claude.json"
    path.write_text(f'{{"x": {constant}}}')
    done = install(where, "claude")
    assert done.returncode == 2
    assert done.stderr.startswith(f"dsh: CONFIG_ERROR: {path} is not valid JSON (")
    assert done.stderr.count("\n") == 1
    assert path.read_text() == f'{{"x": {constant}}}'


# --- Codex and DSH_HOME -----------------------------------------------------------------

def test_codex_gets_dsh_home_in_its_servers_env(where):
    home, project, _ = where
    done = install(where, "codex", DSH_HOME="desk-home")  # relative: made absolute
    assert done.returncode == 0, done.stderr
    entry = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["dsh"]
    assert entry["env"] == {"DSH_HOME": str(project / "desk-home")}


def test_codex_gets_no_env_without_dsh_home(where):
    home, _, _ = where
    assert install(where, "codex").returncode == 0
    entry = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["dsh"]
    assert "env" not in entry


def test_codex_keeps_the_users_own_dsh_home(where):
    home, _, _ = where
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('[mcp_servers.dsh.env]\nDSH_HOME = "/srv/mine"\n')
    assert install(where, "codex", DSH_HOME="/elsewhere").returncode == 0
    entry = tomllib.loads(path.read_text())["mcp_servers"]["dsh"]
    assert entry["env"] == {"DSH_HOME": "/srv/mine"}
