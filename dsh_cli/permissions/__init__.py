"""Permission requests: may this tool call run? (``spec/permissions.md``)

    vocabulary.py  a request to run one tool call, and the human's decision
    rules.py       permission rules in Claude Code's syntax, and their order
    shell.py       a Bash command read the way the shell reads it, for ``Bash(...)`` rules
    specifiers.py  what a rule's ``Tool(specifier)`` covers for the other tools
    unmatched.py   rules that cannot match any tool offered here, one warning each
    approvals.py   saved "always" approvals, each covering exactly what was shown
    gate.py        PermissionGate: whether one call may run, asking the human when it must
    pending.py     requests settled from outside the process (the relay, the browser)
    wording.py     a prompt's words, shared by every UI: who asks, what each choice covers

A policy around ``ToolRegistry.execute`` (``dsh_cli.tools.permission_policy``) asks a
``PermissionGate``, which applies the rules, the approvals, and the active permission
provider. The question seam and the agent loop know nothing of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_cli.permissions.approvals import Approvals, definition_digest
    from dsh_cli.permissions.gate import PermissionGate, PermissionProvider
    from dsh_cli.permissions.rules import Rules, matches
    from dsh_cli.permissions.vocabulary import (
        DECISIONS,
        Hints,
        PermissionDecision,
        PermissionInfo,
        PermissionRequest,
    )

__all__ = [
    "DECISIONS",
    "Approvals",
    "Hints",
    "PermissionDecision",
    "PermissionGate",
    "PermissionInfo",
    "PermissionProvider",
    "PermissionRequest",
    "Rules",
    "definition_digest",
    "matches",
]

# Names load on first use: ``dsh permissions list`` reads the approvals file and pays for
# neither the gate (asyncio) nor the rules.
_HOMES = {"Approvals": "approvals", "definition_digest": "approvals",
          "PermissionGate": "gate", "PermissionProvider": "gate",
          "Rules": "rules", "matches": "rules",
          **dict.fromkeys(["DECISIONS", "Hints", "PermissionDecision", "PermissionInfo",
                           "PermissionRequest"], "vocabulary")}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{home}"), name)
