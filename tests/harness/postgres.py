"""A throwaway PostgreSQL: one cluster in a fresh directory, stopped and removed after.

The server is Debian's (``.ci/run`` installs it), made with ``initdb`` in a directory owned
by an unprivileged user (PostgreSQL refuses to run as root), reached over a Unix socket in
that directory only (no TCP port to collide with). Durability is not what it is for: no
fsync, no synchronous commit. The hub's tests (``tests/hub/conftest.py``) and the benchmark
(``bench/hub.py``) both start theirs with ``throwaway_cluster``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["NO_SERVER", "Cluster", "ClusterError", "postgres_bin", "throwaway_cluster"]

PORT = 5432  # names the socket file only: the cluster listens on no TCP port
NO_SERVER = ("no PostgreSQL server programs (initdb, pg_ctl) on PATH or in "
             "/usr/lib/postgresql/*/bin: install Debian's postgresql (bash .ci/run does)")


class ClusterError(RuntimeError):
    """The cluster could not be made or started; the message carries the server's words."""


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
    raise ClusterError("running as root, with neither a postgres nor a nobody user to run "
                       "PostgreSQL as")


@dataclass(frozen=True)
class Cluster:
    """A running throwaway PostgreSQL reached through the socket in ``socket_dir``."""

    socket_dir: Path
    pg_ctl: tuple[str, ...]
    as_owner: dict[str, Any]

    def restart(self) -> None:
        """Stop the server (fast: every session is ended) and start it again."""
        # its output to the log: a server holding our pipe would keep ``run`` waiting
        done = subprocess.run([*self.pg_ctl, "-l", str(self.socket_dir / "log"), "-m", "fast",
                               "-w", "-t", "60", "restart"], **self.as_owner)
        if done.returncode != 0:
            raise ClusterError(done.stdout + done.stderr)

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


@contextmanager
def throwaway_cluster(bindir: Path) -> Iterator[Cluster]:
    """A cluster of ``bindir``'s server, running for the ``with`` block, then gone."""
    owner = _owner()
    base = Path(tempfile.mkdtemp(prefix="dsh-pg-"))
    data = base / "data"
    as_owner: dict[str, Any] = {"cwd": base, "capture_output": True, "text": True,
                                "timeout": 120}
    if owner is not None:
        os.chown(base, owner.pw_uid, owner.pw_gid)
        as_owner.update(user=owner.pw_uid, group=owner.pw_gid, extra_groups=[])
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data)]
    started = False
    try:
        made = subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres",
                               "--auth=trust", "-E", "UTF8", "--no-sync"], **as_owner)
        if made.returncode != 0:
            raise ClusterError(made.stdout + made.stderr)
        # durability is not under test: no fsync makes each CREATE DATABASE cheap
        options = (f"-k {base} -p {PORT} -c listen_addresses='' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        start = subprocess.run([*pg_ctl, "-l", str(base / "log"), "-w", "-t", "60",
                                "-o", options, "start"], **as_owner)
        started = start.returncode == 0
        if not started:
            log = (base / "log").read_text(errors="replace") if (base / "log").exists() else ""
            raise ClusterError(start.stdout + start.stderr + log)
        yield Cluster(base, tuple(pg_ctl), as_owner)
    finally:
        if started:
            subprocess.run([*pg_ctl, "-m", "immediate", "-w", "stop"], **as_owner)
        shutil.rmtree(base, ignore_errors=True)
