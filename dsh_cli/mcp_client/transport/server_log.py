"""``mcp.log``: the servers' stderr and dsh's notices about them, capped with one rotation.

A server may write to stderr as fast as the pipe takes it; the log keeps the newest
``limit`` bytes or more in two files: when a write would take ``mcp.log`` past the
limit, it becomes ``mcp.log.1`` (replacing the one before) and a new ``mcp.log`` starts.
``sdk_logs_to`` sends the SDK's own log records there too: what it logs about a server's
bad output (a traceback quoting it) is no line for the screen.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from dsh_cli.core.limits import SERVER_LOG_BYTES as LOG_LIMIT

__all__ = ["LOG_LIMIT", "LogSink", "ServerLog", "sdk_logs_to"]


class LogSink(Protocol):
    """Where a server's stderr and notices go: a text file, or a ``ServerLog``."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class ServerLog:
    """A text log of at most ``limit`` bytes, plus one rotated file ``NAME.1``."""

    def __init__(self, path: Path, limit: int = LOG_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self._file = open(path, "ab")  # noqa: SIM115 - held open until close()
        self._size = self._file.tell()

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "replace")[-self.limit:]
        if self._size + len(data) > self.limit:
            self._rotate()
        self._file.write(data)
        self._size += len(data)
        return len(text)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def _rotate(self) -> None:
        self._file.close()
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        self._file = open(self.path, "ab")  # noqa: SIM115 - held open until close()
        self._size = 0

    def __enter__(self) -> ServerLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def sdk_logs_to(sink: LogSink) -> Iterator[None]:
    """While the block runs, the ``mcp`` SDK's warnings and errors go to ``sink`` only."""
    logger = logging.getLogger("mcp")
    handler = logging.StreamHandler(sink)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # nor to the root logger or logging's last resort: stderr
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
