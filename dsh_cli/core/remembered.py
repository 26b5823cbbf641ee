"""Decisions remembered per name and digest in a private JSON file (mode 0600).

Saved approvals ("always" for a tool definition) and trusted projects (a project's
``.mcp.json``) are both "this name, with exactly this content, was accepted": a changed
digest is not accepted until the human says so again. The file is read and changed through
``core/json_file.py``: several processes remember and forget at once without losing one
another's entries, and a file that cannot be trusted (torn, huge, a link, not private) is a
``PrivateFileError``, never taken as empty.
Each entry may carry details for people (what it covers); ``entries`` and ``forget`` let
``dsh permissions`` show and undo them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_cli.core import json_file
from dsh_cli.core.clock import utc_stamp
from dsh_cli.core.errors import PrivateFileError

__all__ = ["Remembered"]


class Remembered:
    """``{section: {name: {"digest", "at", …}}}`` in ``path``, changed under its lock."""

    def __init__(self, path: Path, section: str) -> None:
        self.path = path
        self.section = section

    def _entries(self, document: Any) -> dict[str, Any]:
        """The section of ``document``; a file of another shape is refused, never emptied."""
        if document is None:
            return {}
        entries = document.get(self.section, {}) if isinstance(document, dict) else None
        if not isinstance(entries, dict):
            raise PrivateFileError(self.path, f'does not hold a JSON object with "{self.section}"'
                                              " entries; move it away or fix it")
        return entries

    def _read(self) -> dict[str, Any]:
        return self._entries(json_file.read(self.path))

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
        def change(document: Any) -> dict[str, Any]:
            entries = self._entries(document)
            entries[name] = {**details, "digest": digest,
                             "at": utc_stamp(timespec="seconds")}
            return self._document(document, entries)

        json_file.update(self.path, change)

    def forget(self, names: set[str]) -> int:
        """Drop the entries called ``names``; how many there were."""
        dropped = 0

        def change(document: Any) -> dict[str, Any] | None:
            nonlocal dropped
            entries = self._entries(document)
            kept = {name: entry for name, entry in entries.items() if name not in names}
            dropped = len(entries) - len(kept)
            return self._document(document, kept) if dropped else None

        json_file.update(self.path, change)
        return dropped

    def _document(self, document: Any, entries: dict[str, Any]) -> dict[str, Any]:
        # other sections (a later dsh's) are kept as they are
        return {**(document if isinstance(document, dict) else {}), self.section: entries}
