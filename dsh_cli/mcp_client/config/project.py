"""A project's ``.mcp.json``: read once, and trusted for exactly what it would run.

The file's bytes are read once; the digest is taken of those bytes and the servers are
parsed from them, so a file swapped between two reads can never start a command under
another content's trust. Trust also covers the code a stdio server runs inside the project
(``runs.py`` says what: ``./server.sh``, ``python -m pkg``'s package, a command found on
the entry's own ``PATH`` …): each file's bytes join the digest, so changed code is asked
about again. With no such file the digest is the file's own SHA-256, as trusted before
scripts were covered. More than ``TRUST_FILES`` files or ``TRUST_BYTES`` bytes to hash is
trusted for one run only (``--mcp-project``), never remembered.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dsh_cli.core.errors import ConfigError, PrivateFileError
from dsh_cli.core.limits import PROJECT_FILE_BYTES as MAX_PROJECT_FILE
from dsh_cli.core.limits import TRUST_BYTES, TRUST_FILES
from dsh_cli.core.lines import notice as dsh_line
from dsh_cli.mcp_client.config.servers import PROJECT_FILE, ServerConfig, decode_file, parse_servers

__all__ = ["MAX_PROJECT_FILE", "Coverage", "project_coverage", "project_servers"]

_SCHEME = b"dsh project trust 2\n"


def project_servers(cwd: Path, *, trust_now: bool, config_dir: Path,
                    environ: Mapping[str, str],
                    notice: Callable[[str], None] | None = None) -> list[ServerConfig]:
    """The servers of ``cwd/.mcp.json`` when it is trusted (``trust_now``: from now on).

    An untrusted, changed or unreadable file gives no servers and one ``notice`` (a whole
    ``dsh:`` line); with ``trust_now`` a bad file is a ``ConfigError`` instead (nothing bad
    is trusted).
    """
    from dsh_cli.mcp_client.config.trust import FILE_NAME, ProjectTrust

    path = cwd / PROJECT_FILE
    data = _read(path)
    if data is None:
        return []
    try:
        if len(data) > MAX_PROJECT_FILE:
            raise ConfigError(f"{path}: over {MAX_PROJECT_FILE // 1024} KiB, not an MCP config")
        servers = parse_servers(decode_file(data, path), str(path), environ)
    except ConfigError:
        if trust_now:
            raise
    else:
        where = cwd.resolve()
        coverage = project_coverage(data, servers, where, cwd, environ)
        if coverage.over is not None:
            if trust_now:
                _say(notice, f"{path}: {coverage.over}: trusted for this run only, "
                     "not remembered")
                return servers
            _say(notice, f"{path} is not trusted: {coverage.over}, so no trust in it is "
                 "remembered and its servers are left out; pass --mcp-project to trust it "
                 "for one run")
            return []
        trust = ProjectTrust(config_dir / FILE_NAME)
        try:
            if trust_now:
                trust.trust(where, coverage.digest)
                for gap in coverage.gaps:
                    _say(notice, f"{path}: trusted, but {gap}")
                return servers
            if trust.trusted(where, coverage.digest):
                return servers
        except PrivateFileError as error:
            # a trust file that cannot be trusted trusts nothing, and is not written over
            if trust_now:
                raise ConfigError(f"{error.message}; {path} is not trusted") from None
            _say(notice, f"{error.message}; the servers of {path} are left out")
            return []
    _say(notice, f"{path} is not trusted (it can run commands), or it or the code its servers "
         "run changed since, so its servers are left out; pass --mcp-project to trust it with "
         "the code its servers run inside the project (not what a package, or a script in "
         "another language, loads from elsewhere, nor what that code opens or fetches as it "
         "runs)")
    return []


def _say(notice: Callable[[str], None] | None, text: str) -> None:
    if notice is not None:
        notice(dsh_line(text))


def _read(path: Path) -> bytes | None:
    """The file's bytes (one read, one byte past the cap), or None when there is none."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_PROJECT_FILE + 1)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None
    return data


@dataclass(frozen=True)
class Coverage:
    """What trusting the project covers: the digest, or why it could not all be hashed."""

    digest: str
    files: int = 0  # files of the servers' code hashed with the file's bytes
    over: str | None = None  # over a cap (``core/limits.py``): nothing to remember
    gaps: tuple[str, ...] = ()  # what an entry runs that is not covered, per server


def project_coverage(data: bytes, servers: list[ServerConfig], root: Path, cwd: Path,
                     environ: Mapping[str, str]) -> Coverage:
    """The file's bytes and the code its stdio servers run inside ``root`` (``runs.py``)."""
    from dsh_cli.mcp_client.config.runs import entry_runs

    own = hashlib.sha256(data).hexdigest()
    here = os.path.abspath(cwd)
    files: set[str] = set()
    trees: set[str] = set()
    gaps = []
    for server in servers:
        runs = entry_runs(server, root, cwd, environ)
        files.update(str(path) for path in runs.files)
        trees.update(str(path) for path in runs.trees)
        gaps += [f"server {server.name!r}: {gap}" for gap in dict.fromkeys(runs.gaps)]
    try:
        for tree in sorted(trees):
            files.update(_tree_files(tree, TRUST_FILES - len(files)))
        if len(files) > TRUST_FILES:
            raise _OverCap(f"over {TRUST_FILES} files")
        if not files:
            return Coverage(own, gaps=tuple(gaps))
        digest = hashlib.sha256(_SCHEME + own.encode() + b"\n")
        budget = _Budget(TRUST_BYTES)
        for name, path in sorted((_name(path, here), path) for path in files):
            digest.update(f"{name}\0{_file_digest(path, budget)}\n".encode())
    except _OverCap as over:
        return Coverage(own, len(files), over=f"its servers run {over} inside the project, "
                        f"more than dsh hashes ({TRUST_FILES} files, {_size(TRUST_BYTES)})",
                        gaps=tuple(gaps))
    return Coverage(digest.hexdigest(), len(files), gaps=tuple(gaps))


def _size(count: int) -> str:
    """Bytes as the cap is written: in MiB when it is one or more."""
    return f"{count // (1024 * 1024)} MiB" if count >= 1024 * 1024 else f"{count} bytes"


def _name(path: str, here: str) -> str:
    """``path`` relative to ``here`` as the digest names it (a slice when under it: fast)."""
    if path.startswith(here + os.sep):
        return path[len(here) + 1:]
    return os.path.relpath(path, here)


@dataclass
class _Budget:
    """The bytes left to hash, shared by every file of one project."""

    left: int


class _OverCap(Exception):
    """More to hash than ``TRUST_FILES`` or ``TRUST_BYTES``: what was over."""


def _tree_files(top: str, room: int) -> list[str]:
    """Every file under ``top``, links followed (as an import follows them), each directory
    once; ``__pycache__`` left out, since Python rewrites it as the server runs."""
    found: list[str] = []
    seen: set[str] = set()
    pending = [top]
    entries = 0
    while pending:
        folder = pending.pop()
        try:
            real = os.path.realpath(folder)
            if real in seen:
                continue
            seen.add(real)
            listing = os.scandir(folder)
        except (OSError, ValueError):
            found.append(folder)  # hashed as "unreadable": a folder that turns readable asks
            continue
        with listing:
            for item in listing:
                entries += 1  # a directory counts too: a tree of empty ones is work as well
                if entries > room:
                    raise _OverCap(f"over {TRUST_FILES} files")
                if item.name == "__pycache__":
                    continue
                try:
                    is_dir = item.is_dir()
                except OSError:
                    is_dir = False
                (pending if is_dir else found).append(os.path.join(folder, item.name))
    return found


def _file_digest(path: str, budget: _Budget) -> str:
    """The SHA-256 of a regular file's bytes, read within ``budget``; never opened when it
    is not a regular file (reading a FIFO would wait for a writer)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return "not a file"
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return "unreadable"
    digest = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # swapped since the stat
            return "not a file"
        while chunk := os.read(descriptor, 1024 * 1024):
            budget.left -= len(chunk)
            if budget.left < 0:
                raise _OverCap(f"over {_size(TRUST_BYTES)}")
            digest.update(chunk)
    except OSError:
        return "unreadable"
    finally:
        os.close(descriptor)
    return digest.hexdigest()
