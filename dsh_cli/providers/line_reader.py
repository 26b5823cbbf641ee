"""``LineReader``: lines of a blocking stream (stdin, a pipe, a file) for asyncio code.

A daemon thread reads and hands each line to the event loop through a queue, so the loop
never blocks on input, EOF and Ctrl-C behave the same for pipes, files and terminals, and
a question that is settled elsewhere simply stops waiting (the line stays queued for the
next one). Streams with a file descriptor are read with ``os.read`` so the thread never
holds the buffered reader's lock, which would stall interpreter shutdown; the thread reads
its own duplicate of the descriptor, so a descriptor number its owner closes and the process
reuses for another pipe is never read by a thread that outlived its reader.

With ``max_line``, a line is never buffered past that many bytes: ``readline`` raises
``LineTooLong`` once for it, and the rest of it, up to its newline, is read and dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import threading
from collections.abc import Iterator
from typing import IO

__all__ = ["LineReader", "LineTooLong"]

_CHUNK = 65536


class LineTooLong(Exception):
    """A line went past ``limit`` bytes; what followed it, to its newline, was dropped."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a line is at most {limit} bytes")
        self.limit = limit


def _file_descriptor(stream: IO[str] | IO[bytes] | int) -> int | None:
    """The stream's descriptor when it has one (in-memory streams have none).

    Reading the descriptor bypasses the stream's own buffer: callers hand over a stream
    nothing has read from yet (stdin at start-up).
    """
    if isinstance(stream, int):
        return stream
    if isinstance(stream, io.StringIO | io.BytesIO):
        return None
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


class LineReader:
    """Reads lines in a background thread; ``await readline()`` is None at end of input."""

    def __init__(self, stream: IO[str] | IO[bytes] | int, *, errors: str = "replace",
                 max_line: int | None = None) -> None:
        self._stream = stream
        self._errors = errors  # how undecodable bytes are handed over (codecs error handler)
        self._max_line = max_line
        self._queue: asyncio.Queue[str | LineTooLong | None] | None = None
        self._thread: threading.Thread | None = None
        self._fd: int | None = None  # the thread's own duplicate of the stream's descriptor
        self._has_fd = False  # the stream has a descriptor (then only ``_fd`` is read)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.at_eof = False
        self._closed = False

    def start(self) -> None:
        """Start the reader thread (idempotent); needs a running event loop."""
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        fd = _file_descriptor(self._stream)
        if fd is not None:
            self._has_fd = True
            with contextlib.suppress(OSError):  # a closed descriptor: the thread sees no input
                self._fd = os.dup(fd)  # here, before the owner can close or reuse the number
        self._thread = threading.Thread(target=self._run, name="dsh-line-reader", daemon=True)
        self._thread.start()

    @property
    def ended(self) -> bool:
        """The input has ended and every line before the end was read."""
        return self.at_eof and (self._queue is None or self._queue.empty())

    async def readline(self) -> str | None:
        """The next line without its line ending, or None once the input has ended."""
        self.start()
        assert self._queue is not None
        if self.at_eof and self._queue.empty():
            return None
        line = await self._queue.get()
        if line is None:
            self.at_eof = True
        if isinstance(line, LineTooLong):
            raise line
        return line

    def _deliver(self, line: str | LineTooLong | None) -> bool:
        """Hand a line to the loop; False when the loop is gone (the thread then stops)."""
        assert self._loop is not None and self._queue is not None
        if self._closed:
            return False
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
        except RuntimeError:
            return False
        return True

    def _run(self) -> None:
        fd = self._fd
        try:
            if fd is not None:
                lines: Iterator[str | LineTooLong] = self._descriptor_lines(fd)
            elif self._has_fd:
                lines = iter(())  # the descriptor was closed before the reader started
            else:
                lines = self._stream_lines()
            for line in lines:
                if not self._deliver(line):
                    return
        except (OSError, ValueError):
            pass  # a read error (or a closed stream) ends the input the way EOF does
        finally:
            if fd is not None:
                os.close(fd)
        self._deliver(None)

    def _descriptor_lines(self, fd: int) -> Iterator[str | LineTooLong]:
        partial: list[bytes] = []  # pieces of a line longer than one read: joined once
        size = 0  # bytes in ``partial``
        skipping = False  # inside a line that went past max_line: drop to its newline
        while not self._closed:
            try:
                chunk = os.read(fd, _CHUNK)
            except InterruptedError:
                continue
            if not chunk:
                break
            first, *rest = chunk.split(b"\n")
            if not skipping:
                partial.append(first)
                size += len(first)
            if rest:
                *complete, partial_tail = rest
                if not skipping:
                    yield self._line(b"".join(partial))
                for raw in complete:
                    yield self._line(raw)
                partial, size, skipping = [partial_tail], len(partial_tail), False
            if not skipping and self._max_line is not None and size > self._max_line:
                partial, size, skipping = [], 0, True
                yield LineTooLong(self._max_line)
        if any(partial):
            yield self._line(b"".join(partial))

    def _line(self, raw: bytes) -> str | LineTooLong:
        if self._max_line is not None and len(raw) > self._max_line:
            return LineTooLong(self._max_line)
        return self._decode(raw)

    def _stream_lines(self) -> Iterator[str]:
        stream = self._stream
        if isinstance(stream, int):  # a descriptor is read by ``_descriptor_lines``
            return
        while True:
            raw = stream.readline()
            if not raw:
                return
            yield self._decode(raw) if isinstance(raw, bytes) else raw.rstrip("\r\n")

    def _decode(self, raw: bytes) -> str:
        return raw.decode("utf-8", self._errors).rstrip("\r\n")

    def close(self) -> None:
        """Stop handing lines over; a thread blocked in a read ends with the process."""
        self._closed = True
        self.at_eof = True
        if self._queue is not None and self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
