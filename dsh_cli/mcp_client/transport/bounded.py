"""A server's messages bounded before anything is built from them (``spec/mcp.md`` section 4).

``lines`` splits a stdio server's stdout into lines and stops at the first one longer than
the limit, holding at most the limit (plus one read) in memory; ``bound_body`` is an HTTP
response hook that does the same for a JSON response body. SSE events are bounded by the
SDK's own ``max_sse_event_size``, given the same limit.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream

__all__ = ["MessageTooLarge", "bound_body", "lines"]


class MessageTooLarge(Exception):
    """A message from a server longer than ``limit`` bytes; it was not read to its end."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a message over {_size(limit)} (max_mcp_message)")
        self.limit = limit


async def lines(stream: ByteReceiveStream, limit: int) -> AsyncGenerator[bytes, None]:
    """Each line of ``stream`` without its newline; ``MessageTooLarge`` at one over ``limit``."""
    import anyio

    buffer = bytearray()
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if len(buffer) + end - start > limit:
                raise MessageTooLarge(limit)
            if buffer:
                buffer += chunk[start:end]
                line = bytes(buffer)
                buffer.clear()
            else:  # the usual case, a whole message in one read: no copy into the buffer
                line = chunk[start:end]
            yield line
            start = end + 1
        if len(buffer) + len(chunk) - start > limit:
            raise MessageTooLarge(limit)
        buffer += chunk[start:]


def bound_body(limit: int) -> Any:
    """An httpx response hook: a body other than an event stream fails its read once it
    passes ``limit`` bytes, as a stream error the SDK answers its request with.

    The client asks for ``Accept-Encoding: identity``; a compressed body is refused, since
    a few bytes of it can unpack to any size.
    """
    import httpx2

    class BoundedStream(httpx2.AsyncByteStream):
        """The response's own stream, cut off at ``limit`` bytes."""

        def __init__(self, stream: Any, *, compressed: bool) -> None:
            self._stream = stream
            self._compressed = compressed

        async def __aiter__(self) -> AsyncIterator[bytes]:
            if self._compressed:  # its size unpacked is unknown until it is built
                await self.aclose()
                raise httpx2.StreamError("a compressed body, though dsh asks for identity")
            seen = 0
            async for chunk in self._stream:
                seen += len(chunk)
                if seen > limit:
                    await self.aclose()
                    raise httpx2.StreamError(str(MessageTooLarge(limit)))
                yield chunk

        async def aclose(self) -> None:
            await self._stream.aclose()

    async def hook(response: Any) -> None:
        if response.headers.get("content-type", "").lower().startswith("text/event-stream"):
            return  # each event is bounded by the SDK's max_sse_event_size
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        response.stream = BoundedStream(response.stream,
                                        compressed=encoding not in ("", "identity"))

    return hook


def _size(limit: int) -> str:
    mib, rest = divmod(limit, 1024 * 1024)
    return f"{mib} MiB" if not rest else f"{limit} bytes"
