"""A real PostgreSQL for the hub's tests: one throwaway cluster a session, one database a test.

The cluster is Debian's server (``.ci/run`` installs it), made with ``initdb`` in a fresh
directory owned by an unprivileged user (PostgreSQL refuses to run as root), reached over a
Unix socket in that directory only (no TCP port to collide with), and stopped at the end;
each test's store is a schema of its own.
Only a machine without the server's programs skips, and says so.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

PORT = 5432  # names the socket file only: the cluster listens on no TCP port


def postgres_bin() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl``: on PATH, else Debian's newest."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).parent
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"),
                   key=lambda path: int(path.parts[-3]) if path.parts[-3].isdigit() else 0)
    return found[-1].parent if found else None


def _owner() -> pwd.struct_passwd | None:
    """Whom the server runs as: ourselves, or (as root) ``postgres``, else ``nobody``."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    pytest.fail("running as root, with neither a postgres nor a nobody user to run "
                "PostgreSQL as")


@dataclass(frozen=True)
class Cluster:
    """A running throwaway PostgreSQL reached through the socket in ``socket_dir``."""

    socket_dir: Path
    pg_ctl: tuple[str, ...]
    as_owner: dict

    def restart(self) -> None:
        """Stop the server (fast: every session is ended) and start it again."""
        # its output to the log: a server holding our pipe would keep ``run`` waiting
        done = subprocess.run([*self.pg_ctl, "-l", str(self.socket_dir / "log"), "-m", "fast",
                               "-w", "-t", "60", "restart"], **self.as_owner)
        assert done.returncode == 0, done.stdout + done.stderr

    def url(self, schema: str | None = None) -> str:
        """The URL of the cluster's database, seeing only ``schema`` when one is named."""
        url = f"postgresql:///postgres?host={self.socket_dir}&port={PORT}&user=postgres"
        return url + (f"&options={quote(f'-c search_path={schema}')}" if schema else "")

    def create_schema(self) -> str:
        """The URL of a new empty schema: a store of its own (a database costs a second)."""
        import psycopg

        name = "hub_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {name}")
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_cluster():
    """A PostgreSQL cluster for this test session (each xdist worker has its own)."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server programs (initdb, pg_ctl) on PATH or in "
                    "/usr/lib/postgresql/*/bin: install Debian's postgresql (bash .ci/run does)")
    owner = _owner()
    base = Path(tempfile.mkdtemp(prefix="dsh-pg-"))
    data = base / "data"
    as_owner: dict = {"cwd": base, "capture_output": True, "text": True, "timeout": 120}
    if owner is not None:
        os.chown(base, owner.pw_uid, owner.pw_gid)
        as_owner.update(user=owner.pw_uid, group=owner.pw_gid, extra_groups=[])
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data)]
    started = False
    try:
        made = subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres",
                               "--auth=trust", "-E", "UTF8", "--no-sync"], **as_owner)
        assert made.returncode == 0, made.stdout + made.stderr
        # durability is not under test: no fsync makes each CREATE DATABASE cheap
        options = (f"-k {base} -p {PORT} -c listen_addresses='' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        start = subprocess.run([*pg_ctl, "-l", str(base / "log"), "-w", "-t", "60",
                                "-o", options, "start"], **as_owner)
        started = start.returncode == 0
        log = (base / "log").read_text(errors="replace") if (base / "log").exists() else ""
        assert started, start.stdout + start.stderr + log
        yield Cluster(base, tuple(pg_ctl), as_owner)
    finally:
        if started:
            subprocess.run([*pg_ctl, "-m", "immediate", "-w", "stop"], **as_owner)
        shutil.rmtree(base, ignore_errors=True)


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
