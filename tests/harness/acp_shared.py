"""One ``dsh acp`` child shared by the tests of a module, on an event loop of its own thread.

Each test opens its own session on it (``session/new``: a fresh runtime, its script read
afresh), so tests that vary only what the client answers need not each start the agent;
``SharedAgent.run`` runs a test's async body on the agent's loop with the records cleared.
A test about the agent's start, its exit or what it keeps in ``DSH_HOME`` starts its own.
``rescript`` gives a shared agent's next session a test's own script.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from harness.acp_client import WAIT, Recorder, started

__all__ = ["SharedAgent", "rescript", "shared_agent"]


def rescript(model: str, *turns: dict[str, Any]) -> None:
    """The script file of ``model`` (``script:PATH``) holds ``turns``: a shared agent reads
    it afresh at each ``session/new``, so the session a test opens next plays them."""
    path = Path(model.removeprefix("script:"))
    assert model.startswith("script:") and path.is_file(), model
    path.write_text(json.dumps({"turns": list(turns)}))


class SharedAgent:
    """``dsh acp ARGS`` held open; ``run(body)`` awaits ``body(conn, client)`` on its loop."""

    def __init__(self, *args: str, env: dict[str, str], **options: Any) -> None:
        # the ``-m`` model, for ``rescript`` when it is a script
        self.model = args[args.index("-m") + 1] if "-m" in args else ""
        self.env = env  # for a test's own children that read the agent's DSH_HOME
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        opened: concurrent.futures.Future[tuple[Any, Recorder]] = concurrent.futures.Future()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(args, env, options, opened),
                                                      self._loop)
        try:
            self.conn, self.client = opened.result(WAIT)
        except BaseException:
            self.close()
            raise

    async def _hold(self, args: tuple[str, ...], env: dict[str, str], options: dict[str, Any],
                    opened: concurrent.futures.Future[tuple[Any, Recorder]]) -> None:
        self._stop = asyncio.Event()
        try:
            async with started(*args, env=env, **options) as (conn, client, _):
                opened.set_result((conn, client))
                await self._stop.wait()
        except BaseException as error:
            if not opened.done():
                opened.set_exception(error)
            raise

    def run(self, body: Callable[[Any, Recorder], Awaitable[Any]]) -> Any:
        """``body(conn, client)`` on the agent's loop, the client's records of earlier
        tests cleared first (each test's turns are awaited to their end)."""

        async def fresh() -> Any:
            self.client.updates.clear()
            self.client.raw.clear()
            for queue in (self.client.forms, self.client.permissions, self.client.completed):
                while not queue.empty():
                    queue.get_nowait()
            return await asyncio.wait_for(body(self.conn, self.client), WAIT * 2)

        return asyncio.run_coroutine_threadsafe(fresh(), self._loop).result()

    def close(self) -> None:
        """The agent's stdin closed, its exit awaited, the loop stopped."""
        stop = getattr(self, "_stop", None)
        if stop is not None:
            self._loop.call_soon_threadsafe(stop.set)
        with contextlib.suppress(Exception):
            self._held.result(WAIT)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(WAIT)
        self._loop.close()


@contextlib.contextmanager
def shared_agent(*args: str, env: dict[str, str], **options: Any) -> Iterator[SharedAgent]:
    """A ``SharedAgent`` for a module-scoped fixture, closed after the module's last test."""
    agent = SharedAgent(*args, env=env, **options)
    try:
        yield agent
    finally:
        agent.close()
