"""A TCP proxy on 127.0.0.1 standing in for the load balancer in front of hub processes.

It forwards each connection to one upstream port; ``switch`` sends new connections to
another, and ``drop`` closes every connection it carries, the way a balancer lets go of a
backend it found dead. A connection whose upstream cannot be reached is closed at once (the
client sees the server disconnect without a response). Bounded: at most ``CONNECTIONS`` at a
time, each side read ``CHUNK`` bytes at a time and written only as fast as the other drains.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

__all__ = ["TcpProxy", "tcp_proxy"]

CHUNK = 64 * 1024
CONNECTIONS = 64


class TcpProxy:
    """Connections to ``port`` go to ``upstream``; ``refused`` counts those it could not
    reach (``refusals`` waits for a count)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = 0
        self.refused = 0
        self._refusal = asyncio.Condition()
        self._writers: set[asyncio.StreamWriter] = set()

    def switch(self, upstream: int) -> None:
        """New connections go to ``upstream``; those open stay where they are."""
        self.upstream = upstream

    def drop(self) -> None:
        """Close every connection carried now, both ends, without a goodbye."""
        for writer in list(self._writers):
            writer.transport.abort()

    async def refusals(self, count: int) -> None:
        """Until ``count`` connections in all found their upstream gone."""
        async with self._refusal:
            await self._refusal.wait_for(lambda: self.refused >= count)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._writers) >= 2 * CONNECTIONS:
            writer.transport.abort()
            return
        try:
            far_reader, far_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:  # the backend is gone: the client sees the connection close
            writer.transport.abort()
            async with self._refusal:
                self.refused += 1
                self._refusal.notify_all()
            return
        pair = (writer, far_writer)
        self._writers.update(pair)
        try:
            await asyncio.gather(self._pipe(reader, far_writer), self._pipe(far_reader, writer))
        finally:
            for end in pair:
                self._writers.discard(end)
                end.transport.abort()

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        """Bytes one way until either end closes; then the other end closes too."""
        try:
            while data := await source.read(CHUNK):
                sink.write(data)
                await sink.drain()
        except OSError:
            pass
        finally:
            sink.transport.abort()  # a closed side ends the whole connection, as a balancer


@contextlib.asynccontextmanager
async def tcp_proxy(upstream: int) -> AsyncIterator[TcpProxy]:
    """A running ``TcpProxy`` to ``upstream`` for the block; every connection closed after."""
    proxy = TcpProxy(upstream)
    server = await asyncio.start_server(proxy._accept, "127.0.0.1", 0)
    proxy.port = server.sockets[0].getsockname()[1]
    try:
        yield proxy
    finally:
        server.close()
        proxy.drop()
        await server.wait_closed()
