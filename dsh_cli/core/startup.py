"""Start-up without cyclic garbage collection, until the event loop first waits.

Start-up builds tens of thousands of objects that live as long as the process (Click's
commands, pydantic's validators, prompt-toolkit's layout and styles). Collecting while
they are built frees nothing and cost ``dsh ask`` about a tenth of its first frame. The
first time the loop would block (the frame is drawn; a human, a pipe or a socket is
awaited) start-up is over: what it built is frozen (never scanned again, so no catch-up
collection delays the first key) and collection resumes for everything made after it.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = ["hold_collection", "release_collection", "startup_loop"]

_held = False


def hold_collection() -> None:
    """Pause cyclic collection until ``release_collection``; a no-op when it is off already."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collection() -> None:
    """Freeze what start-up built and resume the collection ``hold_collection`` paused."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def startup_loop() -> asyncio.AbstractEventLoop:
    """A selector event loop (asyncio's own on Unix) that ends start-up when it first waits."""
    import asyncio
    import selectors
    import sys

    if sys.platform == "win32":  # its selector loop runs no subprocesses: asyncio's default
        release_collection()
        return asyncio.new_event_loop()

    class StartupSelector(selectors.DefaultSelector):
        def select(self, timeout: float | None = None) -> list[Any]:
            if _held and (timeout is None or timeout > 0):
                release_collection()
            return super().select(timeout)

    loop = asyncio.SelectorEventLoop(StartupSelector())
    asyncio.set_event_loop(loop)  # as asyncio.run sets its own
    return loop
