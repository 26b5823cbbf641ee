"""Driving ``dsh mcp`` with the real SDK client, and ``dsh attach --jsonl`` as a subprocess."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harness.dsh_under_test import DSH, REAL_DSH, own_home_env

QUESTION = {"id": "db", "question": "Which database?",
            "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]}
BATCH = {"questions": [QUESTION]}
CEILING = 20.0  # generous: a broken server fails the test instead of hanging it


def client(*args: str, name: str = "test-agent", mode: str = "auto", cwd: str | None = None,
           env: dict[str, str] | None = None):
    """An ``mcp.Client`` that spawns ``dsh mcp ARGS`` over stdio (in ``env``, else the test's)."""
    from mcp import Client, StdioServerParameters
    from mcp.types import Implementation

    params = StdioServerParameters(command=DSH, args=["mcp", *args],
                                   env=dict(os.environ) if env is None else env, cwd=cwd)
    return Client(params, mode=mode, client_info=Implementation(name=name, version="1.0"))


class SharedClient:
    """One ``dsh mcp ARGS`` client session on an event loop of its own thread, for a module's
    tests whose calls leave nothing the next one sees (an invalid call is an error result):
    one child for them all, not one each (each start is about a second of CPU)."""

    def __init__(self, *args: str, env: dict[str, str], mode: str = "auto",
                 name: str = "test-agent") -> None:
        self.env = env
        self._name = name
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        # the SDK's cancel scopes are entered and left in the one task that holds the session
        self._held = asyncio.run_coroutine_threadsafe(self._hold(args, env, mode), self._loop)
        try:
            self._session = self._ready.result(timeout=CEILING)
        except BaseException:
            self._stop()
            raise

    async def _hold(self, args: tuple[str, ...], env: dict[str, str], mode: str) -> None:
        self._done = asyncio.Event()
        try:
            async with client(*args, env=env, mode=mode, name=self._name) as mcp:
                self._ready.set_result(mcp)
                await self._done.wait()
        except BaseException as error:
            if not self._ready.done():
                self._ready.set_exception(error)
            raise

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        call = asyncio.wait_for(self._session.call_tool(name, arguments), CEILING)
        return asyncio.run_coroutine_threadsafe(call, self._loop).result()

    async def call(self, name: str, arguments: dict[str, Any], **options: Any) -> Any:
        """``call_tool`` awaited on another event loop (a test's own); cancelling it cancels
        the call in the session (the SDK sends notifications/cancelled)."""
        call = self._session.call_tool(name, arguments, **options)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call, self._loop))

    @property
    def here(self) -> Any:
        """The session as a test's own loop uses it: ``await shared.here.call_tool(...)``."""
        return SimpleNamespace(call_tool=self.call)

    def list_tools(self) -> Any:
        listed = asyncio.wait_for(self._session.list_tools(), CEILING)
        return asyncio.run_coroutine_threadsafe(listed, self._loop).result()

    @property
    def protocol_version(self) -> str:
        return self._session.protocol_version

    def close(self) -> None:
        """End the session (the child exits as its stdin closes) and the loop."""
        try:
            self._loop.call_soon_threadsafe(self._done.set)
            self._held.result(timeout=CEILING)
        finally:
            self._stop()

    def _stop(self) -> None:
        self._held.cancel()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=CEILING)
        self._loop.close()


def held_agent(tmp_path_factory: Any, *args: str, name: str) -> Iterator[SharedClient]:
    """A module's one ``dsh mcp ARGS``, with a DSH_HOME of its own, for a module-scoped
    fixture whose tests' desks attach to it (``attach_here``)."""
    shared = SharedClient(*args, env=own_home_env(tmp_path_factory.mktemp("agent")), name=name)
    try:
        yield shared
    finally:
        shared.close()


def attach_here(agent: SharedClient, monkeypatch: Any) -> None:
    """This test's desks (its children) attach where ``agent`` serves: its DSH_HOME."""
    monkeypatch.setenv("DSH_HOME", agent.env["DSH_HOME"])


class JsonlDeskProcess:
    """``dsh attach --jsonl`` as a child: read its events, send it frames."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def event(self, kind: str | None = None) -> dict[str, Any]:
        """The next event (of ``kind``, skipping others)."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), CEILING)
            assert line, "the desk ended early"
            event = json.loads(line)
            if kind is None or event["type"] == kind:
                return event

    async def send(self, frame: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(frame) + "\n").encode())
        await self.process.stdin.drain()

    async def answer(self, requested: dict[str, Any], answers: list[dict[str, Any]]) -> None:
        await self.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                         "session_id": requested["session_id"], "answers": answers})

    async def close(self) -> int:
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        return await asyncio.wait_for(self.process.wait(), CEILING)


@asynccontextmanager
async def jsonl_desk(env: dict[str, str] | None = None, real_start: bool = False):
    """``dsh attach --jsonl`` (in ``env``, else the test's); ``real_start`` for a test that
    signals the desk's process itself (SIGSTOP reaches no fork server's child)."""
    process = await asyncio.create_subprocess_exec(
        REAL_DSH if real_start else DSH, "attach", "--jsonl", stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, env=env)
    desk = JsonlDeskProcess(process)
    try:
        yield desk
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def bounded(coro, ceiling: float = 60.0):
    """``asyncio.run`` with a ceiling, so a hang fails the test."""
    return asyncio.run(asyncio.wait_for(coro, ceiling))


async def server_socket(ceiling: float = CEILING) -> Path:
    """The desk socket of the one ``dsh mcp`` running, once it listens."""
    from dsh_cli.desk.channel import server_sockets

    for _ in range(int(ceiling / 0.05)):
        found = server_sockets()
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError("dsh mcp made no socket")


async def ask_once_linked(mcp, desk: JsonlDeskProcess, think: float = 0.0) -> dict[str, Any]:
    """Ask until the desk is linked (before, ``NO_PROVIDER`` comes at once); answer it there
    after ``think`` seconds."""
    requested = asyncio.ensure_future(desk.event("question/requested"))
    while True:
        call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
        await asyncio.wait({call, requested}, return_when=asyncio.FIRST_COMPLETED)
        if requested.done():
            break
        assert call.result().structured_content["error"]["code"] == "NO_PROVIDER"
        await asyncio.sleep(0.1)
    await asyncio.sleep(think)
    await desk.answer(requested.result(), [{"id": "db", "selected": ["SQLite"]}])
    result = await call
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    return requested.result()
