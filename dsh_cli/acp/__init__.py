"""``dsh acp``: dsh's agent as an Agent Client Protocol agent (``spec/acp.md``, docs/acp.md).

    wire.py         stdin/stdout as bounded JSON-RPC lines (the one boundary with the client)
    messages.py     the ACP messages dsh sends, as plain JSON (dsh's own builders)
    forms.py        a question batch as one form elicitation, and its content back as answers
    questions.py    the question provider: each batch an ``elicitation/create``
    permission.py   the permission provider: each request a ``session/request_permission``
    updates.py      the session's events as ``session/update`` notifications
    session.py      one ACP session: a dsh runtime, its tools, its turns
    errors.py       the JSON-RPC errors a client's request can get, dsh's code in data
    agent.py        the ACP methods dsh answers, on the SDK's router
    serve.py        the process: the connection, the sessions, a clean end at EOF

The SDK (``agent-client-protocol``) is imported here only, and only by ``dsh acp``.
"""
