"""Question providers for tests that need a human who never answers."""

from __future__ import annotations

import asyncio


class Never:
    """A provider that shows the batch and waits forever (the human walked away)."""

    def __init__(self) -> None:
        self.shown = asyncio.Event()

    async def ask(self, context: object) -> object:
        self.shown.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")
