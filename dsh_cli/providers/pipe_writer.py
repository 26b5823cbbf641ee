"""``PipeWriter``: bytes to a descriptor from a daemon thread; a write never blocks the loop.

A pipe nobody reads is full after 64 KiB, and a blocking ``write()`` in the event loop then
holds everything: question timeouts stop firing and SIGTERM waits for the reader. So the
event loop only queues bytes and a daemon thread writes them. The thread waits for the
descriptor to be writable (``poll``) and writes at most ``PIPE_BUF`` bytes at a time, so
it sees how long the reader has taken nothing. It writes with ``os.write``, never through
the stream's buffer, whose lock would stall interpreter shutdown if it were held. A line
that fits one piece, with nothing queued and room in the pipe, is written at once instead.

The reader is *gone* when it has taken nothing for ``stall`` seconds while bytes wait, or
lets more than ``limit`` bytes pile up, or closes its end: what is queued is dropped,
nothing more is written, and ``on_gone(reason)`` runs on the event loop (once).
``close()`` ends the thread (what is still queued is dropped): every writer is closed
when its stream is done with, or each one would leave a thread behind.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import select
import threading
import time
from collections.abc import Callable

from dsh_cli.core.limits import PIPE_QUEUE_BYTES as DEFAULT_LIMIT

__all__ = ["DEFAULT_LIMIT", "DEFAULT_STALL", "PipeWriter", "descriptor_of"]

DEFAULT_STALL = 30.0  # seconds a reader may take nothing while bytes wait
_PIECE = select.PIPE_BUF if hasattr(select, "PIPE_BUF") else 512  # never blocks once writable
_TICK = 0.25  # how often the thread looks at the clock while the reader takes nothing


def descriptor_of(stream: object) -> int | None:
    """The stream's descriptor, or None for in-memory streams (they never block)."""
    try:
        fileno = stream.fileno  # type: ignore[attr-defined]
        return int(fileno())
    except (AttributeError, OSError, ValueError):
        return None


class PipeWriter:
    """Queue bytes for ``fd``; a daemon thread writes them in order."""

    def __init__(self, fd: int, *, limit: int = DEFAULT_LIMIT, stall: float = DEFAULT_STALL,
                 on_gone: Callable[[str], object] | None = None) -> None:
        self.fd = fd
        self.limit = limit
        self.stall = stall
        self.on_gone = on_gone
        self.gone: str | None = None  # why the reader counts as gone, once it does
        self._closed = False
        self._queue: collections.deque[bytes] = collections.deque()
        self._queued = 0  # bytes in the queue and in the piece being written
        self._wake = threading.Condition()
        self._ready = select.poll()  # the fast path's look: room for a piece right now?
        self._ready.register(fd, select.POLLOUT)
        self._loop: asyncio.AbstractEventLoop | None = None
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="dsh-pipe-writer", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        """Bytes not yet taken by the reader."""
        return self._queued

    def write(self, data: bytes) -> None:
        """Queue ``data``; returns at once. Dropped once the reader is gone."""
        with self._wake:
            if self.gone is not None or self._closed or not data:
                return
            if not self._queued and len(data) <= _PIECE and self._ready.poll(0):
                # nothing queued or in flight and room for it: written here at once (one
                # piece never blocks a writable pipe), sparing the thread's wake-up per line
                try:
                    written = os.write(self.fd, data)
                except OSError as error:  # EPIPE: the reader closed its end
                    self._give_up(f"the reader closed its end ({error.strerror})")
                    return
                data = data[written:]
                if not data:
                    return
            if self._queued + len(data) > self.limit:
                self._give_up(f"more than {self.limit} bytes waiting to be read")
                return
            self._queue.append(data)
            self._queued += len(data)
            self._wake.notify()

    async def flush(self, timeout: float) -> bool:
        """Wait until everything is written (True), the reader is gone or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while self._queued and self.gone is None and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        return not self._queued and self.gone is None

    def close(self) -> None:
        """Write nothing more and end the thread; bytes still queued are dropped."""
        with self._wake:
            self._closed = True
            self._queue.clear()
            self._queued = 0
            self._wake.notify()

    def _give_up(self, reason: str) -> None:
        """Mark the reader gone (caller holds the lock) and tell the loop once."""
        if self.gone is not None:
            return
        self.gone = reason
        self._queue.clear()
        self._queued = 0
        self._wake.notify()
        if self.on_gone is not None and self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                self._loop.call_soon_threadsafe(self.on_gone, reason)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._queue and self.gone is None and not self._closed:
                    self._wake.wait()
                if self.gone is not None or self._closed:
                    return
                data = self._queue.popleft()
            try:
                self._write_all(data)
            except OSError as error:  # EPIPE: the reader closed its end
                with self._wake:
                    self._give_up(f"the reader closed its end ({error.strerror})")
                return

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        idle_since = time.monotonic()
        poller = select.poll()
        poller.register(self.fd, select.POLLOUT)
        while view:
            with self._wake:
                if self.gone is not None or self._closed:
                    return
            if not poller.poll(_TICK * 1000):
                if time.monotonic() - idle_since > self.stall:
                    with self._wake:
                        self._give_up(f"nothing was read for {self.stall:g} s")
                    return
                continue
            written = os.write(self.fd, view[:_PIECE])
            view = view[written:]
            idle_since = time.monotonic()
            with self._wake:
                if self.gone is None and not self._closed:  # else the count was reset
                    self._queued -= written
