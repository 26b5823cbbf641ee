"""Real ``dsh hub serve`` children and the official MCP SDK as an agent of their ``/mcp``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from urllib.parse import quote

from dsh_cli.hub import HubStore
from harness.dsh_under_test import DSH

__all__ = ["agent", "agent_token", "hub_process"]


@contextlib.asynccontextmanager
async def hub_process(location: str, *args: str, host: str = "127.0.0.1",
                      env: dict[str, str] | None = None):
    """A real `dsh hub serve` on ``location``; yields its URL, then stops it (SIGTERM)."""
    process = await asyncio.create_subprocess_exec(
        DSH, "hub", "serve", "--store", location, "--port", "0", *args,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})})
    try:
        assert process.stderr is not None
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line.startswith(f"dsh: hub http://{host}:"), line
        yield line.split()[-1]
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


def agent_token(location: str, name: str = "ci-bot", kind: str = "agent",
                team: str | None = None) -> str:
    """A new token's secret, made in the store at ``location``."""
    with HubStore.open(location) as store:
        return store.add_token(name, kind, team).secret  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def agent(url: str, token: str | None, mode: str = "legacy", **headers: str):
    """An MCP client of the hub's /mcp (the official SDK), sending ``token`` and headers."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    sent = {f"X-Dsh-{name.capitalize()}": quote(value) for name, value in headers.items()}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(headers=sent, timeout=60) as http, \
            Client(streamable_http_client(f"{url}/mcp", http_client=http),
                   mode=mode) as client:
        yield client
