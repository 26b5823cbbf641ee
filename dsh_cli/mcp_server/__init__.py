"""``dsh mcp``: dsh's question UI as an MCP server for any agent (``spec/mcp.md`` section 1).

    desk_hub.py the hub of desks: listening, each desk's line read once, holds, taken
    desks.py    the desk providers: a batch or permission request waits for a desk
    process.py  one ``dsh mcp`` process wired: its answer source, the desk hub, the gate, the store
    service.py  one tool call: the source label, progress, the session record, the result
    session_record.py  the session a ``dsh mcp`` process stores, made at the first call
    tickets.py  the tickets' view of work fetched later (async batches): caps, expiry, fetch
    owned/      work fetched later by its owner: who owns a request, the one store of it
    get_user_answer.py  the tool that fetches an async batch's outcome by its ticket
    server.py   the MCP server (the SDK's low-level ``Server``) on stdio or Streamable HTTP
    http_door.py  the door of ``--http``: the token, and a cap on live sessions
    budget.py   the bytes of open batches held: per session, and in all
    approve.py  one ``approve_tool_use`` call (Claude Code's permission prompt tool)
    tasks/      MCP tasks: the store, and the 2025-11-25 and 2026-07-28 wire shapes
    install/    ``dsh mcp install AGENT``: dsh written into another agent's config files
    forward.py  ``dsh mcp --hub URL``: stdio forwarded to a hub's ``/mcp``, reconnecting
    hub_target.py  the hub's URL (plain http only to loopback) and the agent token

Nothing here is imported unless ``dsh mcp`` runs.
"""
