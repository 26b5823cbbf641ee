"""``dsh mcp --http`` with the SDK's client, and fetching an async ticket's answer."""

from __future__ import annotations

import asyncio
import subprocess
from contextlib import asynccontextmanager

from harness.dsh_under_test import DSH


async def fetch(mcp, ticket, wait=0):
    return await mcp.call_tool("get_user_answer", {"ticket": ticket, "wait_seconds": wait})


@asynccontextmanager
async def http_mcp(*args: str):
    """``dsh mcp --http ARGS``; yields its URL."""
    process = await asyncio.create_subprocess_exec(
        DSH, "mcp", "--http", *args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        line = (await asyncio.wait_for(process.stderr.readline(), 20)).decode()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        await process.wait()
