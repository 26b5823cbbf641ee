"""A permission decision: the four a human can give, in the order keys 1-4 choose them,
and the words every screen and the transcript say of one once it is given."""

from __future__ import annotations

from typing import Literal

__all__ = ["DECIDED_WORDS", "DECISIONS", "Decision"]

Decision = Literal["allow_once", "allow_session", "allow_always", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow_once", "allow_session", "allow_always", "deny")
# what a settled request says ("git: allowed once"); an "always" names what it covers after
DECIDED_WORDS: dict[str, str] = {
    "allow_once": "allowed once",
    "allow_session": "allowed for this session",
    "allow_always": "allowed always",
    "deny": "denied",
}
