"""Fixtures for ``dsh mcp`` tests: a private runtime directory per test."""

from __future__ import annotations

import shutil
import tempfile

import pytest


@pytest.fixture(autouse=True)
def runtime_dir(monkeypatch):
    """A short private ``XDG_RUNTIME_DIR`` (Unix socket paths are limited to 108 bytes)."""
    path = tempfile.mkdtemp(prefix="dsh-rt-")
    monkeypatch.setenv("XDG_RUNTIME_DIR", path)
    yield path
    shutil.rmtree(path, ignore_errors=True)
