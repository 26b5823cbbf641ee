"""Which stored question batches a resumed session re-asks, under their own ``rpc_id``.

A batch is resumable while its tool call has no result, whatever its status says (a
dying process may have settled it as aborted without recording the result). A model may
reuse a tool-call id in a later turn, so a call id alone does not say which call a batch
or a result belongs to: a batch belongs to the last assistant message that declared its
call id before the batch was created, and a result to the last one before the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["resumable_batches"]


def resumable_batches(messages: Sequence[dict[str, Any]], created: Sequence[str],
                      batches: Sequence[tuple[str, str, str]]) -> dict[str, str]:
    """``{call_id: rpc_id}`` of the batches still waiting for their tool result.

    ``created`` holds each message's ``created_at``; ``batches`` are ``(call_id,
    rpc_id, created_at)`` rows, oldest first. Timestamps are ISO strings (they sort).
    """
    declared: dict[str, list[tuple[str, int]]] = {}  # call id -> [(time, message index)]
    latest: dict[str, int] = {}
    answered: set[tuple[str, int]] = set()  # (call id, index of the declaring message)
    results: set[str] = set()
    for index, (message, when) in enumerate(zip(messages, created, strict=True)):
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                call_id = call.get("id") if isinstance(call, dict) else None
                if isinstance(call_id, str):
                    declared.setdefault(call_id, []).append((when, index))
                    latest[call_id] = index
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str):
                results.add(call_id)
                if call_id in latest:
                    answered.add((call_id, latest[call_id]))
    pending: dict[str, str] = {}
    for call_id, rpc_id, when in batches:
        owner = _declared_by(declared.get(call_id, ()), when)
        if (call_id not in results) if owner is None else ((call_id, owner) not in answered):
            pending[call_id] = rpc_id
    return pending


def _declared_by(declarations: Sequence[tuple[str, int]], when: str) -> int | None:
    """The last message that declared the call at or before ``when``."""
    owner = None
    for declared_at, index in declarations:
        if declared_at > when:
            break
        owner = index
    return owner
