"""Trusted projects: a project's ``.mcp.json`` can run commands, so it is used only once trusted.

``trusted-projects.json`` in the config directory (mode 0600) maps a resolved project path to
a digest of the ``.mcp.json`` that was trusted; a changed file is not trusted until
``--mcp-project`` is given again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["FILE_NAME", "ProjectTrust", "file_digest"]

FILE_NAME = "trusted-projects.json"


def file_digest(path: Path) -> str | None:
    """The SHA-256 of the file's bytes, or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class ProjectTrust:
    """``{"projects": {path: {"digest", "trusted_at"}}}``; an unreadable file trusts nothing."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return projects if isinstance(projects, dict) else {}

    def trusted(self, project: Path, digest: str) -> bool:
        entry = self._read().get(str(project))
        return isinstance(entry, dict) and entry.get("digest") == digest

    def trust(self, project: Path, digest: str) -> None:
        """Remember this project file (written whole to a 0600 file, then renamed)."""
        projects = self._read()
        projects[str(project)] = {"digest": digest,
                                  "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump({"projects": projects}, file, indent=2, sort_keys=True)
            file.write("\n")
        os.replace(temporary, self.path)
