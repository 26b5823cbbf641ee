"""A server's result without ``resultType`` read as ``"complete"`` (2026-07-28, SEP-2322).

The 2026-07-28 schema says a client MUST treat an absent ``resultType`` as ``"complete"``;
the SDK (mcp 2.3) validates results against that era's surface, which requires the field,
and fails the call. ``complete_by_default`` wraps a transport so each response reaches the
SDK with the default filled in, before anything is built from it; a present value is kept
as sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

__all__ = ["COMPLETE", "complete_by_default"]

COMPLETE = "complete"


@asynccontextmanager
async def complete_by_default(transport: AbstractAsyncContextManager[Any],
                              ) -> AsyncIterator[tuple[Any, Any]]:
    """``transport``'s streams, its read stream filling in each result's ``resultType``."""
    async with transport as (read, write):
        yield _Defaulted(read), write


def _fill(item: Any) -> Any:
    """``item`` with a response's absent ``resultType`` set; anything else as it came."""
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCResponse

    if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCResponse):
        item.message.result.setdefault("resultType", COMPLETE)
    return item


class _Defaulted:
    """The SDK's read stream (its ``ReadStream`` protocol), each item through ``_fill``."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, which the SDK looks for on its stream."""
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        return _fill(await self._stream.receive())

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> _Defaulted:
        return self

    async def __anext__(self) -> Any:
        return _fill(await self._stream.__anext__())

    async def __aenter__(self) -> _Defaulted:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._stream.__aexit__(*exc)
        return result
