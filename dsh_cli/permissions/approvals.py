"""Saved "always" approvals: per tool *and* per tool definition, in the config directory.

An approval names the tool and a digest of what the human approved (server, description,
input schema). When a server changes a tool's description or schema, the digest differs and
the old approval no longer applies: the human is asked again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from dsh_cli.core.remembered import Remembered

__all__ = ["Approvals", "definition_digest"]

FILE_NAME = "permissions.json"


def definition_digest(server: str | None, description: str | None, schema: Any) -> str:
    """A stable digest of a tool's definition as the model sees it."""
    text = json.dumps({"server": server, "description": description or "", "schema": schema},
                      sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class Approvals:
    """Saved "always" approvals in ``permissions.json``: per tool, per definition digest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = Remembered(path, "always")

    def approved(self, tool: str, digest: str) -> bool:
        return self._file.holds(tool, digest)

    def approve(self, tool: str, digest: str) -> None:
        self._file.remember(tool, digest)
