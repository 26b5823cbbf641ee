"""close_task: the UI finishes cleaning up, and a stop aimed at the caller still lands."""

from __future__ import annotations

import asyncio

import pytest

from dsh_cli.core.tasks import close_task
from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction


class SlowToClose:
    """A provider that never answers and takes a while to restore the screen."""

    def __init__(self) -> None:
        self.closed = False
        self.closing = asyncio.Event()  # cancelled: restoring the screen now

    async def ask(self, context):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.closing.set()
            await asyncio.sleep(0.1)  # restoring the terminal
            self.closed = True
            raise


def test_a_cancel_while_closing_is_held_until_the_task_is_done_then_raised():
    async def main():
        provider = SlowToClose()
        inner = asyncio.ensure_future(provider.ask(None))
        await asyncio.sleep(0)
        closer = asyncio.ensure_future(close_task(inner))
        await provider.closing.wait()
        closer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closer
        assert provider.closed and inner.cancelled()

    asyncio.run(main())


def test_a_stop_during_the_timeout_cleanup_is_not_swallowed_by_ask_timeout():
    async def main():
        ui = UserInteraction()
        provider = SlowToClose()
        ui.register_provider(provider)
        request = AskUserQuestionRequest(questions=[{"id": "a", "question": "A?"}])
        ask = asyncio.ensure_future(ui.ask(request, timeout=0.05))
        await provider.closing.wait()  # timed out; the UI is still closing
        ask.cancel()  # SIGTERM arrives now
        with pytest.raises(asyncio.CancelledError):
            await ask
        assert provider.closed and len(ui.pending) == 0

    asyncio.run(main())
