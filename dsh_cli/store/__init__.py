"""The session store: every message and question batch on disk as it happens (SQLite).

    db.py            the SQLite connection: file mode, pragmas, errors a user can act on
    migrations.py    the schema as an ordered list of migrations (``PRAGMA user_version``)
    sessions.py      sessions, their messages, batches and permission requests
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
