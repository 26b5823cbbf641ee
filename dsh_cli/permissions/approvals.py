"""Saved "always" approvals: per tool *and* per tool definition, in the config directory.

An approval names the tool and a digest of what the human approved (server, description,
input schema). When a server changes a tool's description or schema, the digest differs and
the old approval no longer applies: the human is asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["Approvals", "definition_digest"]

FILE_NAME = "permissions.json"


def definition_digest(server: str | None, description: str | None, schema: Any) -> str:
    """A stable digest of a tool's definition as the model sees it."""
    text = json.dumps({"server": server, "description": description or "", "schema": schema},
                      sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class Approvals:
    """``{tool: {"digest", "approved_at"}}`` in ``permissions.json``; unreadable = empty."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        approvals = data.get("always") if isinstance(data, dict) else None
        return approvals if isinstance(approvals, dict) else {}

    def approved(self, tool: str, digest: str) -> bool:
        entry = self._read().get(tool)
        return isinstance(entry, dict) and entry.get("digest") == digest

    def approve(self, tool: str, digest: str) -> None:
        """Save the approval (the file is the owner's only; written whole, then renamed)."""
        approvals = self._read()
        approvals[tool] = {"digest": digest, "approved_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump({"always": approvals}, file, indent=2, sort_keys=True)
            file.write("\n")
        os.replace(temporary, self.path)
