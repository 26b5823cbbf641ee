"""stdin and stdout as JSON-RPC lines: the one place ``dsh acp`` reads its client's bytes.

A line is read up to ``ACP_LINE_BYTES`` (the SDK's own stdio limit) and parsed once; one
longer is skipped as it arrives, never held, and answered ``-32600`` (under its id when
the line names one before its first nested value, else ``null``). A line that is not JSON
is ``-32700``, one that is not an object ``-32600``; the client's next line is read as
usual. Writes go out in the order they are made: ``post`` (a notification from an event
handler, which cannot wait) and ``send`` (the SDK's replies and requests) share one
writer. EOF calls ``on_eof`` before the SDK hears of it, so the session's turns are
cancelled before the requests waiting on the client fail.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from typing import Any

from dsh_cli.core.json_lines import json_line
from dsh_cli.core.limits import ACP_LINE_BYTES

__all__ = ["StdioWire", "open_stdio"]

_CHUNK = 1024 * 1024  # what the reader buffers before a long line is taken in parts
# the request's id, when it comes before any nested object or array (as clients write it)
_LEADING_ID = re.compile(rb'^\s*\{[^{}\[\]]*?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


class StdioWire:
    """The SDK's ``Transport`` over a reader and a writer (stdin and stdout)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 limit: int = ACP_LINE_BYTES) -> None:
        self._reader = reader
        self._writer = writer
        self.limit = limit
        self.on_eof: Callable[[], None] | None = None
        self._ended = False

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON-RPC object; None at EOF (bad lines are answered, never returned)."""
        while True:
            line = await self._line()
            if line is None:
                if not self._ended:
                    self._ended = True
                    if self.on_eof is not None:
                        self.on_eof()
                return None
            if isinstance(line, _TooLong):
                self.post(_error(line.id, -32600, "Invalid request",
                                 f"the line is over {self.limit:,} bytes; it was not read"))
                continue
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                self.post(_error(None, -32700, "Parse error", "the line is not JSON"))
                continue
            if not isinstance(message, dict):
                self.post(_error(None, -32600, "Invalid request",
                                 "a JSON-RPC message is a JSON object"))
                continue
            return message

    async def send(self, message: dict[str, Any]) -> None:
        self.post(message)
        await self.drain()

    async def drain(self) -> None:
        """Wait until what was written has gone to the client (a slow reader holds us)."""
        if not self._writer.is_closing():
            try:
                await self._writer.drain()
            except (ConnectionError, RuntimeError):  # the client went away: nothing to send
                pass

    def post(self, message: dict[str, Any]) -> None:
        """Write one message now, without waiting: what an event handler sends."""
        if self._writer.is_closing():
            return
        try:
            self._writer.write(json_line(message).encode("utf-8"))
        except (ConnectionError, RuntimeError):
            pass

    async def close(self) -> None:
        await self.drain()

    async def _line(self) -> bytes | _TooLong | None:
        """One line, or ``_TooLong`` after skipping it to its end; None at EOF."""
        parts: list[bytes] = []
        size = 0
        too_long: _TooLong | None = None
        while True:
            try:
                part = await self._reader.readuntil(b"\n")
                done = True
            except asyncio.LimitOverrunError as over:
                part = await self._reader.readexactly(over.consumed)
                done = False
            except asyncio.IncompleteReadError as ended:
                part, done = ended.partial, True
                if not part and not parts and too_long is None:
                    return None
            if too_long is None:
                size += len(part)
                if size > self.limit:
                    head = parts[0] if parts else part
                    too_long = _TooLong(_leading_id(head))
                    parts.clear()
                else:
                    parts.append(part)
            if done:
                return too_long if too_long is not None else b"".join(parts)


class _TooLong:
    """A line skipped for its size, with the id it named (None when it named none early)."""

    def __init__(self, request_id: int | str | None) -> None:
        self.id = request_id


def _leading_id(head: bytes) -> int | str | None:
    match = _LEADING_ID.match(head[:4096])
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def _error(request_id: int | str | None, code: int, message: str, details: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id,
            "error": {"code": code, "message": message, "data": {"details": details}}}


async def open_stdio(limit: int = ACP_LINE_BYTES) -> StdioWire:
    """The wire over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return StdioWire(reader, writer, limit=limit)


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    """A write-only pipe's protocol that ``StreamWriter.drain`` can wait on."""

    def __init__(self) -> None:
        super().__init__()
        self._closed_future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return self._closed_future

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._closed_future.done():
            self._closed_future.set_result(None)
