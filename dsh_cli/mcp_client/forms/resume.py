"""What a 2026-07-28 input-required round stores with its question batch, so that after a
crash a resumed call retries that round instead of starting over.

The continuation is the round's ``InputRequiredResult`` as the server sent it (its input
requests, and its ``requestState`` kept byte for byte) plus the server and tool it belongs
to; the server by its name and a digest of its endpoint (URL or command line: kept as a
SHA-256, since either may carry a token), so a name pointed at another server before the
resume does not receive the first one's state and answers. It
travels as an opaque JSON object: the seam and the store keep it with the batch
(``AskUserQuestionRequest.continuation``, ``ToolContext.continuation``) and never read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_types import InputRequiredResult

__all__ = ["KIND", "Continuation"]

KIND = "mcp/input-required"  # a stored object of another kind (or version) is not ours


@dataclass(frozen=True)
class Continuation:
    """One input-required round of one call: ``round`` is the server's result, as JSON."""

    server: str
    endpoint: str  # the SHA-256 of the endpoint's JSON
    tool: str
    round: dict[str, Any]

    @classmethod
    def of(cls, server: str, endpoint: list[str], tool: str,
           result: InputRequiredResult) -> Continuation:
        return cls(server, _digest(endpoint), tool,
                   result.model_dump(mode="json", by_alias=True, exclude_none=True))

    @classmethod
    def from_json(cls, data: object, server: str, endpoint: list[str],
                  tool: str) -> Continuation | None:
        """The stored continuation if it is this call's round, else None (call afresh)."""
        if not isinstance(data, dict) or data.get("kind") != KIND:
            return None
        digest = _digest(endpoint)
        if (data.get("server"), data.get("endpoint"), data.get("tool")) != (server, digest,
                                                                             tool):
            return None
        stored = data.get("round")
        if not isinstance(stored, dict):
            return None
        continuation = cls(server, digest, tool, stored)
        try:
            continuation.result()
        except ValueError:  # a hand-edited row: not a round the SDK can read
            return None
        return continuation

    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "server": self.server, "endpoint": self.endpoint,
                "tool": self.tool, "round": self.round}

    def result(self) -> InputRequiredResult:
        """The round as the SDK's model (its input requests, its ``request_state``)."""
        from mcp_types import InputRequiredResult

        return InputRequiredResult.model_validate(self.round)

    @property
    def request_state(self) -> str | None:
        state = self.round.get("requestState")
        return state if isinstance(state, str) else None


def _digest(endpoint: list[str]) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(endpoint).encode()).hexdigest()
