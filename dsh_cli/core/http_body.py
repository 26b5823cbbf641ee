"""A request body read with a cap: a peer's declared or streamed bytes never grow past it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.requests import Request

__all__ = ["capped_body"]


async def capped_body(request: Request, limit: int) -> bytes | None:
    """The body, or None once it is longer than ``limit`` (reading stops there)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
