"""Who owns the work a request leaves to fetch later (an async batch's ticket, an MCP task).

One decision for tickets and tasks alike: the stdio process's one client (``STDIO_OWNER``);
a 2025 Streamable HTTP session (``mcp-session-id``, the public header every request after
``initialize`` carries), as ``owner_of_session(id)``; every HTTP request of the sessionless
2026-07-28 wire together (``SESSIONLESS_OWNER``: there the unguessable id, behind the URL's
token, is the key, and an ``Mcp-Session-Id`` such a request carries decides nothing); or
None, a 2025 HTTP request that names no session, so ownership fails closed (no ticket, no
task). The owners cannot collide: only a session's has a colon.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

__all__ = ["SESSIONLESS_OWNER", "SESSION_HEADER", "STDIO_OWNER", "on_session_end",
           "owner_of_session", "request_owner"]

STDIO_OWNER = "stdio"  # the one client of a stdio process
# every HTTP request of the 2026-07-28 wire (it has no sessions), and its tasks over stdio too
SESSIONLESS_OWNER = "sessionless"
SESSION_HEADER = "mcp-session-id"  # the Streamable HTTP session of a 2025 request


def owner_of_session(session_id: str) -> str:
    """The owner of a 2025 Streamable HTTP session's work."""
    return f"http:{session_id}"


def request_owner(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """Whose work ``ctx``'s request sees and makes (see the module's docstring)."""
    if ctx.request is None:
        return STDIO_OWNER
    if _sessionless(ctx.protocol_version):  # a session id it carries is no session of its
        return SESSIONLESS_OWNER
    headers = getattr(ctx.request, "headers", None)
    session_id = headers.get(SESSION_HEADER) if headers is not None else None
    return owner_of_session(session_id) if session_id else None


def on_session_end(ctx: ServerRequestContext[Any, Any], owner: str, name: str,
                   callback: Callable[[str], Awaitable[None] | None]) -> None:
    """Call ``callback(owner)`` when the HTTP session of ``ctx`` ends (a ``DELETE``, the
    gate closing the idlest, the SDK's idle timeout), not when a connection drops: a client
    that reconnects with its session id finds its work. Once per session and ``name``."""
    # the SDK hands a handler no public way to the connection's exit stack
    # (``mcp_client/sdk_private.py`` lists the name; a test checks it)
    connection = getattr(ctx.session, "_connection", None)
    if connection is None or owner_of_session(connection.session_id) != owner:
        return
    key = f"dsh_{name}"
    if connection.state.get(key):
        return
    connection.state[key] = True

    async def ended() -> None:
        done = callback(owner)
        if done is not None:
            await done

    connection.exit_stack.push_async_callback(ended)


def _sessionless(protocol_version: str) -> bool:
    """Whether ``protocol_version`` is of the era with no sessions (2026-07-28 on)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return protocol_version in MODERN_PROTOCOL_VERSIONS
