"""The bytes of open batches ``dsh mcp`` holds: per session, and in all.

A batch within every field's cap can still be 11 MB (20 questions of 50 options with
10,000-character previews), and each one open costs ``dsh mcp`` more than its size (the
parsed request, its events, the desk's line). Counting batches bounds nothing, so each
call's arguments are weighed (their UTF-8 JSON, the text the call is recorded as) before
the batch is asked: past ``PENDING_BYTES_PER_SESSION`` of one session's open batches, or
``PENDING_BYTES`` of the server's, the call is ``TOO_MANY_PENDING`` at once. A waiting
call holds its bytes until it returns; an async one until its batch ends.
"""

from __future__ import annotations

from collections.abc import Hashable

from dsh_cli.core.errors import TOO_MANY_PENDING, TicketError
from dsh_cli.core.limits import PENDING_BYTES, PENDING_BYTES_PER_SESSION

__all__ = ["BatchBudget", "Held"]

MIB = 1024 * 1024


class Held:
    """The bytes one batch holds; ``release`` (once, however often called) gives them back."""

    def __init__(self, budget: BatchBudget, owner: Hashable, size: int) -> None:
        self._budget, self.owner, self.size = budget, owner, size
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._budget._give_back(self.owner, self.size)


class BatchBudget:
    """What the open batches of each owner, and of all, weigh; refuses one too heavy."""

    def __init__(self, *, per_owner: int = PENDING_BYTES_PER_SESSION,
                 in_all: int = PENDING_BYTES) -> None:
        self.per_owner = per_owner
        self.in_all = in_all
        self.total = 0
        self._of: dict[Hashable, int] = {}

    def held_by(self, owner: Hashable) -> int:
        return self._of.get(owner, 0)

    def take(self, owner: Hashable, size: int) -> Held:
        """Hold ``size`` bytes for ``owner``; ``TOO_MANY_PENDING`` when they do not fit."""
        mine = self._of.get(owner, 0)
        if mine + size > self.per_owner:
            raise TicketError(
                f"this batch is {_mib(size)}; the open batches of this session hold "
                f"{_mib(mine)} already, at most {_mib(self.per_owner)} in all: wait for "
                "answers, or ask a smaller batch", TOO_MANY_PENDING)
        if self.total + size > self.in_all:
            raise TicketError(
                f"this batch is {_mib(size)}; the open batches of this dsh mcp hold "
                f"{_mib(self.total)} already, at most {_mib(self.in_all)} in all: wait for "
                "answers, or ask a smaller batch", TOO_MANY_PENDING)
        self._of[owner] = mine + size
        self.total += size
        return Held(self, owner, size)

    def _give_back(self, owner: Hashable, size: int) -> None:
        self.total -= size
        left = self._of.get(owner, 0) - size
        if left > 0:
            self._of[owner] = left
        else:
            self._of.pop(owner, None)


def _mib(size: int) -> str:
    return f"{size / MIB:.1f} MiB"
