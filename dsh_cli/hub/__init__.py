"""dsh hub: one store of every agent's pending entries for a team (SQLite or PostgreSQL).

    records.py          what the hub keeps, as typed values: entries, tokens, claims, audit rows
    tokens.py           hub tokens: minted from 256 random bits, kept only as a digest
    engine.py           the two things the store needs of a database engine, as one interface
    sqlite_engine.py    the store on SQLite (WAL): one hub process, nothing to set up
    postgres_engine.py  the store on PostgreSQL (psycopg 3, the extra ``hub``): many processes
    migrations.py       the schema as an ordered list of migrations, each in both dialects
    location.py         where a store lives: ``--store`` read once into the engine that opens it
    store.py            HubStore: asks, claims, answers, cancels, timeouts and the audit
    watch.py            HubWatch: one process's ear on the store, brought to the event loop
    context.py          HubContext: what a serving hub's routes share; a request's token
    routes.py           routing: the team an ask goes to; which entries a human may see
    settings.py         the hub's ``[hub]`` config read once: routes, caps, retention
    history.py          ``GET /history``: the audit, for a human's teams
    retention.py        the loop that forgets settled entries past the retention
    asker.py            HubProvider, HubPermissions: an agent's asks kept as entries, answered
    tasks.py            HubTasks: an agent's MCP tasks, read at any hub process from the store
    app.py              the serving hub's web app: agents' /mcp behind their tokens
    serve.py            `dsh hub serve`: one hub process, until a signal stops it
    desks.py            /desk: the humans' desks, the desk protocol over HTTP
    logins.py           the browser desk's one-time login codes and the sessions they become
    public_url.py       the hub's public URL: the browser desk's one origin, Host and cookie
    web_link.py         SelfLink: the desk protocol in process, for one human's browser desk
    web.py              the hub's own browser desk: /login/CODE, the page, its guard
"""

from dsh_cli.hub.records import (
    NOT_PENDING,
    Answered,
    AuditRow,
    Change,
    Claimed,
    Entry,
    HubStoreError,
    IssuedToken,
    NotPending,
    Released,
    Renewed,
    TakenBy,
    Token,
)
from dsh_cli.hub.store import HubStore

__all__ = [
    "NOT_PENDING",
    "Answered",
    "AuditRow",
    "Change",
    "Claimed",
    "Entry",
    "HubStore",
    "HubStoreError",
    "IssuedToken",
    "NotPending",
    "Released",
    "Renewed",
    "TakenBy",
    "Token",
]
