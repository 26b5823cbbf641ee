"""Fixtures for tool tests: a bounded ``asyncio.run`` and a seam with a scripted provider."""

from __future__ import annotations

import asyncio

import pytest


@pytest.fixture
def run():
    """``run(coro)``: ``asyncio.run`` with a ceiling, so a broken registry fails, never hangs."""

    def run_bounded(coro, ceiling=5.0):
        async def bounded():
            return await asyncio.wait_for(coro, ceiling)

        return asyncio.run(bounded())

    return run_bounded
