"""The permission vocabulary: a request to run one tool call, and the human's decision.

A permission request is not a question (``spec/permissions.md``): it has its own types, its
own UI and its own outcomes, and the question seam never sees it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from dsh_cli.core.decisions import DECISIONS, Decision

if TYPE_CHECKING:
    from dsh_cli.core.signal import AbortSignal

__all__ = ["DECISIONS", "Decision", "GrantScope", "Hints", "PermissionDecision",
           "PermissionInfo", "PermissionRequest"]

# What "for this session" and "always" cover: dsh's own tools are granted per tool
# definition; another agent's tool (approve_tool_use) only with this input, in this directory
GrantScope = Literal["definition", "input"]


@dataclass(frozen=True)
class Hints:
    """What a tool says of itself (MCP tool annotations); None where it says nothing."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @classmethod
    def from_annotations(cls, annotations: Any) -> Hints:
        """From MCP ``ToolAnnotations``: the SDK's object (snake_case) or wire JSON (camelCase)."""
        if annotations is None:
            return cls()

        def flag(wire: str, attribute: str) -> bool | None:
            value = getattr(annotations, attribute, None)
            if value is None and isinstance(annotations, dict):
                value = annotations.get(wire)
            return value if isinstance(value, bool) else None

        return cls(flag("readOnlyHint", "read_only_hint"),
                   flag("destructiveHint", "destructive_hint"),
                   flag("idempotentHint", "idempotent_hint"),
                   flag("openWorldHint", "open_world_hint"))

    def to_json(self) -> dict[str, bool]:
        """Only the hints that were given, in the relay's snake_case."""
        pairs = {"read_only": self.read_only, "destructive": self.destructive,
                 "idempotent": self.idempotent, "open_world": self.open_world}
        return {name: value for name, value in pairs.items() if value is not None}


@dataclass(frozen=True)
class PermissionInfo:
    """What the gate needs to know of a tool: its server, hints and definition digest."""

    server: str | None = None
    hints: Hints = field(default_factory=Hints)
    digest: str = ""


@dataclass
class PermissionRequest:
    """May ``tool`` run with ``arguments``? ``rpc_id`` is minted when it is asked."""

    tool: str
    arguments: Any
    server: str | None = None
    hints: Hints = field(default_factory=Hints)
    call_id: str | None = None
    agent: str | None = None
    signal: AbortSignal | None = field(default=None, repr=False)
    description: str | None = None
    scope: GrantScope = "definition"
    cwd: str | None = None  # where another agent's call runs (scope "input")
    session_id: str | None = None  # the session it is asked in: set by the gate as it asks

    def to_json(self) -> dict[str, Any]:
        """The fields a relay event and the store carry."""
        return {"call_id": self.call_id, "tool": self.tool, "server": self.server,
                "arguments": self.arguments, "hints": self.hints.to_json()}

    def arguments_text(self) -> str:
        """The arguments as compact JSON, for display (callers sanitise and fold it)."""
        try:
            return json.dumps(self.arguments, ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            return repr(self.arguments)


@dataclass(frozen=True)
class PermissionDecision:
    """The human's (or a rule's) decision; ``message`` is a reason passed to the model."""

    decision: Decision
    message: str | None = None

    @property
    def allowed(self) -> bool:
        return self.decision != "deny"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"decision": self.decision}
        if self.message:
            data["message"] = self.message
        return data
