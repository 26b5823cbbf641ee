"""Decisions remembered per name and digest in a private JSON file (mode 0600).

Saved approvals ("always" for a tool definition) and trusted projects (a project's
``.mcp.json``) are both "this name, with exactly this content, was accepted": a changed
digest is not accepted until the human says so again. An unreadable file remembers nothing.
Each entry may carry details for people (what it covers); ``entries`` and ``forget`` let
``dsh permissions`` show and undo them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dsh_cli.core.clock import utc_stamp

__all__ = ["Remembered"]


class Remembered:
    """``{section: {name: {"digest", "at", …}}}`` in ``path``, written whole, then renamed."""

    def __init__(self, path: Path, section: str) -> None:
        self.path = path
        self.section = section

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        entries = data.get(self.section) if isinstance(data, dict) else None
        return entries if isinstance(entries, dict) else {}

    def holds(self, name: str, digest: str) -> bool:
        """Whether ``name`` was accepted with exactly this ``digest``."""
        entry = self._read().get(name)
        return isinstance(entry, dict) and entry.get("digest") == digest

    def entries(self) -> dict[str, dict[str, Any]]:
        """Every well-formed entry by name, as stored."""
        return {name: entry for name, entry in self._read().items()
                if isinstance(name, str) and isinstance(entry, dict)}

    def remember(self, name: str, digest: str, **details: Any) -> None:
        """Accept ``name`` with ``digest`` from now on (the file is its owner's only)."""
        entries = self._read()
        entries[name] = {**details, "digest": digest,
                         "at": utc_stamp(timespec="seconds")}
        self._write(entries)

    def forget(self, names: set[str]) -> int:
        """Drop the entries called ``names``; how many there were."""
        entries = self._read()
        kept = {name: entry for name, entry in entries.items() if name not in names}
        if len(kept) != len(entries):
            self._write(kept)
        return len(entries) - len(kept)

    def _write(self, entries: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump({self.section: entries}, file, indent=2, sort_keys=True)
            file.write("\n")
        os.replace(temporary, self.path)
