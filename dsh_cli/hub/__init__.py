"""dsh hub: one store of every agent's pending entries for a team (SQLite or PostgreSQL)."""

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
