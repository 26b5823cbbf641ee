"""Real ``dsh hub serve`` children and the official MCP SDK as an agent of their ``/mcp``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import subprocess
import threading
from urllib.parse import quote

from dsh_cli.hub import HubStore
from harness.dsh_under_test import DSH

__all__ = ["ANSWER", "BATCH", "DshChild", "agent", "agent_token", "answer_frame", "bounded",
           "hub_process", "pending_entry", "settled"]

CEILING = 60.0  # a stuck child fails the test instead of hanging the suite


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


class DshChild:
    """A dsh child (``dsh hub serve``, ``dsh attach --web``) whose stderr a thread reads, so
    it never fills; ``said`` waits for the line that names its URL."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen([DSH, *args], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, env={**os.environ, **(env or {})})
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line)
        self.lines.put(None)

    def said(self, prefix: str) -> str:
        """The last word of the first stderr line starting with ``prefix`` (a URL)."""
        while (line := self.lines.get(timeout=CEILING)) is not None:
            if line.startswith(prefix):
                return line.split()[-1]
        raise AssertionError(f"dsh ended before saying {prefix!r}")

    def stop(self) -> None:
        """SIGTERM, as an operator stops it; killed if it does not go."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(CEILING)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


BATCH = {"questions": [{"id": "q1", "header": "DB", "question": "Which database?",
                        "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]}
ANSWER = [{"id": "q1", "selected": ["SQLite"]}]


def bounded(coroutine, seconds: float = 90):
    return asyncio.run(asyncio.wait_for(coroutine, seconds))


async def pending_entry(store: HubStore, kind: str = "question", count: int = 1):
    """The pending entries of ``kind`` once there are ``count`` (a desk's inbox, polled)."""
    while True:
        found = [e for e in await asyncio.to_thread(store.pending) if e.kind == kind]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)


async def settled(store: HubStore, entry_id: str):
    while True:
        entry = await asyncio.to_thread(store.get, entry_id)
        if entry.state != "pending":
            return entry
        await asyncio.sleep(0.05)


def answer_frame(entry, answers=ANSWER) -> dict:
    return {"type": "question/answer", "answers": answers,
            "session_id": entry.batch.get("session_id")}
