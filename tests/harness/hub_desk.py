"""A hub's ``/desk`` served for real (uvicorn on 127.0.0.1) in a thread of the test process.

The store is the test's own ``HubStore``: what the test asks through it (as the agent side
of a hub will) is heard by the server's ``HubWatch`` (a SQLite store's changes reach only
listeners on the same store). ``stop`` and ``start`` again keep the port, so a desk that
lost the hub finds it again there.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time

from dsh_cli.hub import HubStore
from dsh_cli.hub.context import HubContext
from dsh_cli.hub.desks import desk_routes
from dsh_cli.hub.watch import HubWatch

__all__ = ["DeskServer", "wait_until"]

WAIT = 30.0  # a stuck server fails the test instead of hanging the suite


def wait_until(condition, what: str, timeout: float = WAIT):
    """Poll ``condition`` until it is true (its value), failing with ``what`` after ``timeout``."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class DeskServer:
    """``desk_routes`` of a ``HubContext`` on ``store``, served until ``stop``."""

    def __init__(self, store: HubStore, *, lease: float = 30.0, sweep: float = 0.2) -> None:
        self.store = store
        self.lease = lease
        self.sweep = sweep
        self.port = 0
        self.reports: list[str] = []
        self._thread: threading.Thread | None = None
        self._server = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> DeskServer:
        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
        # and without it each reply's body waits for the client's delayed ACK (+40 ms)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        started = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve(sock, started)),
                                        daemon=True, name="hub-desk-server")
        self._thread.start()
        assert started.wait(WAIT), "the desk server did not start"
        return self

    async def _serve(self, sock: socket.socket, started: threading.Event) -> None:
        import uvicorn
        from starlette.applications import Starlette

        self._loop = asyncio.get_running_loop()
        watch = HubWatch(self.store, sweep=self.sweep, report=self.reports.append)
        await watch.start()
        hub = HubContext(self.store, watch, lease=self.lease, report=self.reports.append)
        app = Starlette(routes=desk_routes(hub))
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        serving = asyncio.ensure_future(self._server.serve(sockets=[sock]))
        while not self._server.started and not serving.done():
            await asyncio.sleep(0.01)
        started.set()
        try:
            await serving
        finally:
            await watch.close()

    def stop(self) -> None:
        """Stop serving as a hub process that dies does: every connection is cut at once
        (uvicorn's own shutdown would wait for the streams to end, which they never do)."""
        server = self._server
        if server is not None and self._loop is not None:
            def cut() -> None:
                for listening in server.servers:  # first: nobody connects to what is going
                    listening.close()
                for connection in list(server.server_state.connections):
                    connection.transport.abort()

            self._loop.call_soon_threadsafe(cut)
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True  # streams never finish of themselves
        if self._thread is not None:
            self._thread.join(WAIT)
            assert not self._thread.is_alive(), "the desk server did not stop"
        self._thread = self._server = self._loop = None
