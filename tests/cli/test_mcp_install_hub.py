"""``dsh mcp install AGENT --hub URL``: the agent's server is the forwarder, the token never
written; each agent's file parsed back."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

TOKEN = "dshhub_never_in_a_file"


@pytest.fixture
def where(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def install(where, *args: str) -> subprocess.CompletedProcess[str]:
    home, project = where
    env = {name: value for name, value in os.environ.items()
           if name not in ("XDG_CONFIG_HOME", "DSH_HOME")}
    env.update(HOME=str(home), DSH_HUB_TOKEN=TOKEN)
    return subprocess.run([DSH, "mcp", "install", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def _entry(home: Path, agent: str) -> dict:
    if agent == "codex":
        return tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["dsh"]
    path = home / (".claude.json" if agent == "claude" else ".gemini/settings.json")
    return json.loads(path.read_text())["mcpServers"]["dsh"]


def _written(home: Path) -> str:
    return "".join(path.read_text() for path in home.rglob("*") if path.is_file())


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_the_agent_starts_the_forwarder_and_no_token_is_written(where, agent):
    home, _ = where
    done = install(where, agent, "--hub", "https://hub.example/")
    assert done.returncode == 0, done.stderr
    entry = _entry(home, agent)
    assert entry["args"] == ["mcp", "--hub", "https://hub.example/mcp"]
    # Codex passes a server only the variables it names
    assert entry.get("env_vars") == (["DSH_HUB_TOKEN"] if agent == "codex" else None)
    assert "dsh mcp --hub https://hub.example/mcp" in done.stdout
    assert "DSH_HUB_TOKEN" in done.stdout
    assert TOKEN not in _written(home)


def test_a_token_file_is_named_by_its_absolute_path(where, tmp_path):
    home, _ = where
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    done = install(where, "codex", "--hub", "https://hub.example", "--hub-token-file",
                   os.path.relpath(token, where[1]))
    assert done.returncode == 0, done.stderr
    entry = _entry(home, "codex")
    assert entry["args"] == ["mcp", "--hub", "https://hub.example/mcp", "--hub-token-file",
                             str(token)]
    assert "env_vars" not in entry
    assert TOKEN not in _written(home)


def test_a_bad_hub_url_or_token_file_is_one_line_and_nothing_written(where, tmp_path):
    home, _ = where
    for args in (["--hub", "http://hub.example"], ["--hub", "ftp://hub.example"],
                 ["--hub", "https://hub.example", "--hub-token-file", str(tmp_path / "none")],
                 ["--hub-token-file", str(tmp_path / "none")]):
        done = install(where, "claude", *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (args, done.stderr)
        assert not any(home.iterdir()), args
