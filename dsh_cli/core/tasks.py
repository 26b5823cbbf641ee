"""Closing a task without losing a stop: the one place dsh waits for a cancelled task."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["close_task"]


async def close_task(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` if it still runs and wait until it has finished cleaning up.

    A cancellation aimed at the caller while it waits (SIGTERM arriving as a UI closes) is
    held until the task is done, then raised: the screen is restored and the stop is not
    swallowed. The task's own outcome is marked retrieved; its owner settled by other means.
    """
    if not task.done():
        task.cancel()
    interrupted = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            interrupted = True
    if not task.cancelled():
        task.exception()
    if interrupted:
        raise asyncio.CancelledError
