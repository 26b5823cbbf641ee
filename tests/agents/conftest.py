"""Fixtures for the real agents: the refusing proxy, an installed agent, a JSON-lines desk
(the rig itself is ``agent_rig.py``, importable by tests where a conftest is not)."""

from __future__ import annotations

import pytest
from agent_rig import Agent, JsonlDesk, Leaks, model_settings, runnable
from fakes.npm_programs import npm_program


@pytest.fixture
def leaks():
    """The refusing proxy; a test fails when an agent tried to reach the internet."""
    guard = Leaks()
    yield guard
    guard.close()
    assert guard.hosts == [], f"an agent tried to reach the internet: {guard.hosts}"


@pytest.fixture
def make_agent(tmp_path, leaks, dsh_home):
    """``make_agent(name, model_url)``: that agent, installed from tests/npm, under tmp_path."""
    programs = {"claude": "claude", "codex": "codex", "gemini": "gemini"}

    def make(name: str, model_url: str) -> Agent:
        program = runnable(npm_program(programs[name]))
        home, project = tmp_path / "home", tmp_path / "project"
        home.mkdir(exist_ok=True)
        project.mkdir(exist_ok=True)
        settings = model_settings(name, home, model_url)
        return Agent(name, program, home, project, dsh_home, leaks, model_url, settings)

    return make


@pytest.fixture
def desk(dsh_home):
    """A ``dsh attach --jsonl`` desk in the same DSH_HOME as the agents' ``dsh mcp``."""
    opened = JsonlDesk(dsh_home)
    yield opened
    opened.close()
