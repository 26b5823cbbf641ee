"""Permission requests: may this tool call run? (``spec/permissions.md``)

A policy around ``ToolRegistry.execute`` (``dsh_cli.tools.permission_policy``) asks a
``PermissionGate``, which applies the rules, the approvals, and the active permission
provider. The question seam and the agent loop know nothing of it.
"""

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
