"""The hub store's schema as an ordered list of migrations, each in both dialects.

Append new migrations at the end and never edit one that has shipped. ``hub_schema`` holds
how many a store has applied; a store that counts more than this dsh knows came from a
newer dsh, which is refused rather than guessed at. Times are seconds since the epoch
(``REAL`` / ``double precision``), so a lease compares as a number in either engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh_cli.hub.records import HubStoreError

if TYPE_CHECKING:
    from dsh_cli.hub.engine import Engine

__all__ = ["MIGRATIONS", "Migration", "migrate", "schema_version"]


@dataclass(frozen=True)
class Migration:
    """One step of the schema: the same change written for SQLite and for PostgreSQL."""

    name: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    def statements(self, dialect: str) -> tuple[str, ...]:
        return self.sqlite if dialect == "sqlite" else self.postgresql


def _both(name: str, *statements: str) -> Migration:
    """A migration whose SQL differs between the engines only in types spelled ``{...}``."""
    sqlite = {"real": "REAL", "serial": "INTEGER PRIMARY KEY AUTOINCREMENT", "json": "TEXT",
              "batch_bytes": "length(CAST(batch AS BLOB))"}
    postgresql = {"real": "DOUBLE PRECISION", "serial": "BIGSERIAL PRIMARY KEY", "json": "TEXT",
                  "batch_bytes": "octet_length(batch)"}
    return Migration(name, tuple(s.format(**sqlite) for s in statements),
                     tuple(s.format(**postgresql) for s in statements))


MIGRATIONS: list[Migration] = [
    _both(
        "m001_entries_tokens_audit",
        """CREATE TABLE hub_tokens (
            name TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('agent', 'human')),
            team TEXT,
            digest TEXT NOT NULL UNIQUE,
            created_at {real} NOT NULL
        )""",
        """CREATE TABLE hub_entries (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('question', 'permission')),
            batch {json} NOT NULL,
            token TEXT NOT NULL,
            agent TEXT NOT NULL,
            machine TEXT NOT NULL,
            cwd TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'answered', 'cancelled', 'timeout')),
            answer {json},
            answered_by TEXT,
            claimed_by TEXT,
            claim_expires {real},
            created_at {real} NOT NULL,
            deadline {real},
            resolved_at {real}
        )""",
        # the inbox (pending, oldest first) and the timeout sweep read only pending rows
        "CREATE INDEX hub_entries_pending ON hub_entries(state, created_at)",
        "CREATE INDEX hub_entries_deadline ON hub_entries(state, deadline)",
        """CREATE TABLE hub_audit (
            id {serial},
            entry_id TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN (
                'ask', 'claim', 'release', 'answer', 'cancel', 'timeout')),
            actor TEXT NOT NULL,
            replica TEXT NOT NULL,
            at {real} NOT NULL
        )""",
        "CREATE INDEX hub_audit_by_entry ON hub_audit(entry_id, id)",
        "CREATE INDEX hub_audit_by_time ON hub_audit(at)",
    ),
    # an agent's own key for an ask, so one it repeats (its connection was lost before the
    # reply, or it moved to another hub process) is the same entry, never a second one;
    # NULL keys never collide in either engine
    _both(
        "m002_ask_keys",
        "ALTER TABLE hub_entries ADD COLUMN ask_key TEXT",
        "CREATE UNIQUE INDEX hub_entries_by_key ON hub_entries(token, ask_key)",
    ),
    # what each agent has pending, kept as counters beside the entries (each ask and each
    # settling moves them in its own transaction), so a cap is checked by one row however
    # large the store grows, and one agent's asks queue on that row, never on others'
    _both(
        "m003_agent_load",
        "ALTER TABLE hub_entries ADD COLUMN size BIGINT NOT NULL DEFAULT 0",
        "UPDATE hub_entries SET size = {batch_bytes}",
        """CREATE TABLE hub_load (
            token TEXT PRIMARY KEY,
            entries BIGINT NOT NULL,
            bytes BIGINT NOT NULL
        )""",
        """INSERT INTO hub_load (token, entries, bytes)
            SELECT token, count(*), sum(size) FROM hub_entries WHERE state = 'pending'
            GROUP BY token""",
    ),
    # retention forgets settled entries oldest first (only settled ones have resolved_at)
    _both(
        "m004_retention",
        "CREATE INDEX hub_entries_resolved ON hub_entries(resolved_at)",
    ),
    # the team a route sent an entry to (NULL: no team, every human's); a desk reads the
    # pending entries of its human's team and the unteamed ones, one index range each, and
    # /history the audit rows of those teams (each row keeps its entry's team, which never
    # changes; every entry before this migration has none)
    _both(
        "m005_entry_team",
        "ALTER TABLE hub_entries ADD COLUMN team TEXT",
        "CREATE INDEX hub_entries_team_pending ON hub_entries(state, team, created_at, id)",
        "ALTER TABLE hub_audit ADD COLUMN team TEXT",
        "CREATE INDEX hub_audit_by_team ON hub_audit(team, id)",
    ),
    # each hub process's heartbeat (renewed every sweep, on the store's clock), and the
    # process whose call waits on an entry (NULL: an async entry, fetched by its ticket
    # from any process): a live process's sweep withdraws the pending entries of a
    # process whose heartbeat stopped (kill -9), which nobody would ever take an answer for
    _both(
        "m006_replicas",
        """CREATE TABLE hub_replicas (
            name TEXT PRIMARY KEY,
            seen_at {real} NOT NULL
        )""",
        "CREATE INDEX hub_replicas_seen ON hub_replicas(seen_at)",
        "ALTER TABLE hub_entries ADD COLUMN waiter TEXT",
        "CREATE INDEX hub_entries_waiter ON hub_entries(waiter, state)",
    ),
    # the browser desk's one-time login codes and the sessions they become, each kept as a
    # digest beside the digest of the human token it came from: a token removed (or made
    # again) ends every code and session it gave, by the join that checks them
    _both(
        "m007_web_logins",
        """CREATE TABLE hub_web_codes (
            digest TEXT PRIMARY KEY,
            token_digest TEXT NOT NULL,
            expires_at {real} NOT NULL
        )""",
        "CREATE INDEX hub_web_codes_expiry ON hub_web_codes(expires_at)",
        """CREATE TABLE hub_web_sessions (
            digest TEXT PRIMARY KEY,
            token_digest TEXT NOT NULL,
            expires_at {real} NOT NULL
        )""",
        "CREATE INDEX hub_web_sessions_expiry ON hub_web_sessions(expires_at)",
    ),
]


def schema_version(engine: Engine) -> int:
    """How many migrations the store has applied (0: an empty store)."""
    with engine.transaction() as tx:
        if not tx.has_table("hub_schema"):
            return 0
        rows = tx.rows("SELECT version FROM hub_schema")
    return int(rows[0][0]) if rows else 0


def migrate(engine: Engine, migrations: list[Migration] | None = None) -> int:
    """Apply the migrations this store lacks, all in one transaction; the new version.

    The transaction holds the engine's write lock (SQLite's ``BEGIN IMMEDIATE``, a
    PostgreSQL advisory lock), so two hub processes starting at once migrate once.
    """
    migrations = MIGRATIONS if migrations is None else migrations
    with engine.transaction(write=True) as tx:
        tx.lock_schema()
        if not tx.has_table("hub_schema"):
            tx.run("CREATE TABLE hub_schema (version INTEGER NOT NULL)")
            tx.run("INSERT INTO hub_schema (version) VALUES (0)")
        version = int(tx.rows("SELECT version FROM hub_schema")[0][0])
        if version > len(migrations):
            raise HubStoreError(
                f"hub store {engine.where}: it was written by a newer dsh (schema {version}, "
                f"this dsh knows {len(migrations)}); upgrade dsh")
        for step in migrations[version:]:
            for statement in step.statements(engine.dialect):
                tx.run(statement)
        tx.run("UPDATE hub_schema SET version = ?", (len(migrations),))
    return len(migrations)
