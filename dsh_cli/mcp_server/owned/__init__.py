"""Work a request leaves to fetch later (async batches' tickets, MCP tasks), by its owner.

    owners.py  who owns a request's work: its session, stdio's client, or the sessionless one
    work.py    the one store of it: one record type, counts by owner, the end at exit

Below both ``tickets.py`` and ``tasks/``, the two views of the store (each with its rules
and its wire), which import it; it imports neither.
"""

from __future__ import annotations

from dsh_cli.mcp_server.owned.owners import (
    SESSIONLESS_OWNER,
    STDIO_OWNER,
    on_session_end,
    owner_of_session,
    request_owner,
)

__all__ = ["SESSIONLESS_OWNER", "STDIO_OWNER", "on_session_end", "owner_of_session",
           "request_owner"]
