"""Where a hub store lives: ``--store`` read once into the engine that opens it."""

from __future__ import annotations

from pathlib import Path

from dsh_cli.core.home import data_dir
from dsh_cli.hub.engine import Engine

__all__ = ["POSTGRES_SCHEMES", "default_path", "engine_for", "is_postgres"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def default_path() -> Path:
    """The SQLite hub store when no ``--store`` is given: ``hub.db`` beside the sessions."""
    return data_dir() / "hub.db"


def is_postgres(location: str) -> bool:
    return location.startswith(POSTGRES_SCHEMES)


def engine_for(location: str | Path | None) -> Engine:
    """A PostgreSQL engine for a ``postgresql://`` URL, else SQLite at the path (or default)."""
    if isinstance(location, str) and is_postgres(location):
        from dsh_cli.hub.postgres_engine import PostgresEngine

        return PostgresEngine(location)
    from dsh_cli.hub.sqlite_engine import SqliteEngine

    if isinstance(location, str) and location.startswith("sqlite:"):
        location = location.removeprefix("sqlite:").removeprefix("//")
    return SqliteEngine(Path(location).expanduser() if location else default_path())
