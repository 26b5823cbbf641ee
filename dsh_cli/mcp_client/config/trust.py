"""Trusted projects: a project's ``.mcp.json`` can run commands, so it is used only once trusted.

``trusted-projects.json`` in the config directory (mode 0600) maps a resolved project path to
a digest of the ``.mcp.json`` that was trusted; a changed file is not trusted until
``--mcp-project`` is given again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_cli.core.remembered import Remembered

__all__ = ["FILE_NAME", "ProjectTrust"]

FILE_NAME = "trusted-projects.json"


class ProjectTrust:
    """Trusted project files in ``trusted-projects.json``: per path, per file digest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = Remembered(path, "projects")

    def trusted(self, project: Path, digest: str) -> bool:
        return self._file.holds(str(project), digest)

    def trust(self, project: Path, digest: str) -> None:
        self._file.remember(str(project), digest)

    def entries(self) -> dict[str, dict[str, Any]]:
        """Every trusted project, by path, as stored (for ``dsh permissions list``)."""
        return self._file.entries()

    def forget(self, projects: set[str]) -> int:
        """Trust these projects no more; how many were trusted."""
        return self._file.forget(projects)
