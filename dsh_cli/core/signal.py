"""Abort signals: how an owner (a tool call, a turn, a process) tells work to give up.

An abort and the work's own outcome race; the first wins. Work whose outcome is decided
(its batch was answered) seals its signal, and an abort after that is refused: ``abort``
says whether it took effect, so its caller knows which side won.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator

__all__ = ["AbortSignal"]


class AbortSignal:
    """Set once, never cleared; callbacks and awaiters learn of it as it happens."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self.sealed = False  # the guarded work is decided: no abort takes effect now
        self._callbacks: list[Callable[[str], object]] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self.reason is not None

    def abort(self, reason: str = "aborted") -> bool:
        """Abort with ``reason``; False when it took no effect (aborted already: the first
        reason stays; or sealed: the work's outcome came first)."""
        if self.reason is not None or self.sealed:
            return False
        self.reason = reason
        if self._event is not None:
            self._event.set()
        for callback in list(self._callbacks):
            callback(reason)
        return True

    def seal(self) -> None:
        """The guarded work is decided (first wins): every later ``abort`` is refused."""
        if self.reason is None:
            self.sealed = True
            self._callbacks.clear()

    def on_abort(self, callback: Callable[[str], object]) -> Callable[[], None]:
        """Run ``callback(reason)`` on abort (at once if already aborted); returns a remover."""
        if self.reason is not None:
            callback(self.reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> str:
        """Wait until aborted; returns the reason."""
        if self._event is None:
            self._event = asyncio.Event()
            if self.reason is not None:
                self._event.set()
        await self._event.wait()
        assert self.reason is not None
        return self.reason

    @contextlib.contextmanager
    def scoped_child(self) -> Iterator[AbortSignal]:
        """A child for one piece of work, unhooked from this signal when the work ends: a
        signal that lives long (a turn, a call) keeps no listener per piece."""
        sub = AbortSignal()
        remove = self.on_abort(sub.abort)
        try:
            yield sub
        finally:
            remove()

    def child(self) -> AbortSignal:
        """A signal aborted whenever this one is (and also on its own)."""
        sub = AbortSignal()
        self.on_abort(sub.abort)
        return sub
