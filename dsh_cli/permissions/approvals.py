"""Saved "always" approvals in the config directory: each covers exactly what was shown.

dsh's own tools are approved per tool *and* per tool definition: an approval names the tool
and a digest of its server, description and input schema, so a server that changes a tool
asks the human again. Another agent's tool (``approve_tool_use``: Claude Code's ``Bash``)
is approved only for that agent, that input and that working directory: the digest covers
all four, and the entry keeps them so ``dsh permissions list`` can say what it allows.

Entries of older versions (``"Bash"`` approved for any input) stay in the file, listed as
no longer applied, until ``dsh permissions rm`` removes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from dsh_cli.core.home import APPROVALS_FILE
from dsh_cli.core.remembered import Remembered

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import PermissionRequest

__all__ = ["FILE_NAME", "Approvals", "Grant", "call_digest", "definition_digest", "grant_id"]

FILE_NAME = APPROVALS_FILE  # named in core/home.py, which builds its path
MAX_INPUT_KEPT = 500  # characters of an approved input kept for `dsh permissions list`


def _digest(value: Any) -> str:
    import hashlib  # OpenSSL's load is a tenth of `dsh permissions list` with nothing to list

    text = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"),
                      default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def definition_digest(server: str | None, description: str | None, schema: Any) -> str:
    """A stable digest of a tool's definition as the model sees it."""
    return _digest({"server": server, "description": description or "", "schema": schema})


def call_digest(agent: str | None, tool: str, arguments: Any, cwd: str | None) -> str:
    """A stable digest of one call of another agent's tool: who, what, with what, where."""
    return _digest({"agent": agent or "", "tool": tool, "input": arguments, "cwd": cwd or ""})


def grant_id(file: str, name: str) -> str:
    """The short id ``dsh permissions`` shows for an entry: stable while the entry lives."""
    import hashlib

    return hashlib.sha256(f"{file}\0{name}".encode()).hexdigest()[:8]


class Grant(NamedTuple):  # a NamedTuple: `dsh permissions list` pays no dataclass build
    """One remembered "always", as ``dsh permissions list`` shows it."""

    id: str
    name: str  # the entry's key in the file
    tool: str
    scope: str  # "definition", "input", or "legacy" (an older dsh's, no longer applied)
    at: str
    agent: str | None = None
    cwd: str | None = None
    input: str | None = None
    server: str | None = None


class Approvals:
    """Saved "always" approvals in ``permissions.json``, keyed by what they cover."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = Remembered(path, "always")

    def approved(self, request: PermissionRequest, digest: str) -> bool:
        return self._file.holds(_name(request, digest), digest)

    def approve(self, request: PermissionRequest, digest: str) -> None:
        details: dict[str, Any] = {"tool": request.tool, "scope": request.scope}
        if request.scope == "input":
            details.update(agent=request.agent, cwd=request.cwd,
                           input=request.arguments_text()[:MAX_INPUT_KEPT])
        elif request.server is not None:
            details["server"] = request.server
        self._file.remember(_name(request, digest), digest, **details)

    def grants(self) -> list[Grant]:
        """Every saved approval, oldest first."""
        found = []
        for name, entry in self._file.entries().items():
            scope = entry.get("scope")
            if scope not in ("definition", "input"):
                # before scopes, approve_tool_use kept another agent's tool by name only
                legacy = entry.get("digest") == definition_digest(None, None, name)
                scope = "legacy" if legacy else "definition"
            found.append(Grant(grant_id(FILE_NAME, name), name, _text(entry.get("tool")) or name,
                               scope, _text(entry.get("at")) or "", _text(entry.get("agent")),
                               _text(entry.get("cwd")), _text(entry.get("input")),
                               _text(entry.get("server"))))
        return sorted(found, key=lambda grant: grant.at)

    def forget(self, names: set[str]) -> int:
        """Remove the approvals called ``names``; how many there were."""
        return self._file.forget(names)


def _name(request: PermissionRequest, digest: str) -> str:
    # one entry per tool definition, as before; one per approved input for another agent
    return request.tool if request.scope == "definition" else f"{request.tool} {digest[:16]}"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
