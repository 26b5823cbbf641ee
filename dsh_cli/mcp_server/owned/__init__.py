"""Work a request leaves to fetch later (async batches' tickets, MCP tasks), by its owner.

    owners.py  who owns a request's work: its session, stdio's client, or the sessionless one
    work.py    what tickets and tasks keep alike: records and counts by owner, the end at exit

Below both ``tickets.py`` and ``tasks/``, which import it; it imports neither.
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
