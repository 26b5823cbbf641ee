"""The session store: every message and question batch on disk as it happens (SQLite)."""

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
