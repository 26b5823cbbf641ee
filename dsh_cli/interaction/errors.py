"""Machine-routable errors.

    HarnessError(message, code)          root of every error a caller routes on ``code``
    └── UserInteractionError             the seam's codes (questions.md, "Errors")

The tool registry's own codes ride on ``ToolError`` in ``dsh_cli.tools``.
"""

from __future__ import annotations

__all__ = [
    "ASK_ABORTED",
    "ASK_CANCELLED",
    "ASK_TIMEOUT",
    "CALLER_NOT_LIVE",
    "DELEGATED_CALLER",
    "DUPLICATE_PROVIDER",
    "EMPTY_QUESTIONS",
    "INVALID_ANSWER",
    "INVALID_QUESTIONS",
    "NO_PROVIDER",
    "HarnessError",
    "UserInteractionError",
]

EMPTY_QUESTIONS = "EMPTY_QUESTIONS"
INVALID_QUESTIONS = "INVALID_QUESTIONS"
NO_PROVIDER = "NO_PROVIDER"
DUPLICATE_PROVIDER = "DUPLICATE_PROVIDER"
CALLER_NOT_LIVE = "CALLER_NOT_LIVE"
DELEGATED_CALLER = "DELEGATED_CALLER"
ASK_CANCELLED = "ASK_CANCELLED"
ASK_ABORTED = "ASK_ABORTED"
ASK_TIMEOUT = "ASK_TIMEOUT"
INVALID_ANSWER = "INVALID_ANSWER"


class HarnessError(Exception):
    """An error that carries a stable ``code`` to route on."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def to_dict(self) -> dict[str, str]:
        """``{name, code, message}``, the shape tool results and relay events carry."""
        return {"name": type(self).__name__, "code": self.code, "message": self.message}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.code!r})"


class UserInteractionError(HarnessError):
    """A failure of the question seam: cancelled, aborted, no provider, invalid batch..."""
