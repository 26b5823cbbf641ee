"""The session store: every message and question batch on disk as it happens (SQLite).

``SessionStore`` (``sessions.py``: sessions and messages) joins the question log
(``questions.py``) and the permission log (``permission_log.py``), which share the
connection and lock of ``rows.py``; ``recorder.py`` turns the loop's events into writes.
``db.py`` opens the file and words its errors, ``migrations.py`` shapes it,
``ownership.py`` is the per-session claim, ``resumable.py`` which batches a resume re-asks.
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
