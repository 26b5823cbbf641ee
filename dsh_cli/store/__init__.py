"""The session store: every message and question batch on disk as it happens (SQLite).

    db.py            the SQLite connection: file mode, pragmas, errors a user can act on
    migrations.py    the schema as an ordered list of migrations (``PRAGMA user_version``)
    sessions.py      SessionStore: sessions and messages, joined with the two logs below
    rows.py          the connection and lock the store's parts share
    questions.py     the question log: batches, their answers and outcomes, last answers
    permission_log.py  the permission log: requests and their decisions
    recorder.py      the loop's events turned into writes
    resumable.py     which stored batches a resumed session re-asks, under their ``rpc_id``
    session_lock.py  one process at a time records a session: an ``flock`` per session
"""

from dsh_cli.store.db import SESSION_NOT_FOUND, STORE_ERROR, SessionNotFound, StoreError
from dsh_cli.store.sessions import (
    QuestionBatch,
    SessionRecord,
    SessionStore,
    SessionSummary,
    assistant_message,
)

__all__ = [
    "SESSION_NOT_FOUND",
    "STORE_ERROR",
    "QuestionBatch",
    "SessionNotFound",
    "SessionRecord",
    "SessionStore",
    "SessionSummary",
    "StoreError",
    "assistant_message",
]
