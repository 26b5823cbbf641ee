"""A real PostgreSQL for the hub's tests: one throwaway cluster a session, one schema a test.

The cluster is ``harness.postgres``'s (shared with the benchmark): Debian's server in a
fresh directory, owned by an unprivileged user, reached over a Unix socket only, stopped at
the end; each test's store is a schema of its own.
Only a machine without the server's programs skips, and says so.
"""

from __future__ import annotations

import pytest
from harness.postgres import NO_SERVER, postgres_bin, throwaway_cluster


@pytest.fixture(scope="session")
def postgres_cluster():
    """A PostgreSQL cluster for this test session (each xdist worker has its own)."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip(NO_SERVER)
    with throwaway_cluster(bindir) as cluster:  # ClusterError: the server's words
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster):
    """The URL of an empty store of its own for this test."""
    return postgres_cluster.create_schema()


@pytest.fixture(params=["sqlite", "postgresql"])
def hub_location(request, tmp_path):
    """Where a test's hub store lives: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "hub.db")
    return request.getfixturevalue("postgres_url")
