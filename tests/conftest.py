"""Every test gets its own DSH_HOME and a clean environment (no real keys, no real model)."""

from __future__ import annotations

import pytest

_CLEARED = (
    "DSH_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_API_KEY",
    "DSH_MODEL",
    "DSH_BASE_URL",
    "DSH_QUESTION_TIMEOUT",
    "NO_COLOR",
)


@pytest.fixture(autouse=True)
def dsh_home(tmp_path_factory, monkeypatch):
    """A fresh state directory per test; keys and model settings cleared."""
    home = tmp_path_factory.mktemp("dsh-home")
    monkeypatch.setenv("DSH_HOME", str(home))
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    return home
