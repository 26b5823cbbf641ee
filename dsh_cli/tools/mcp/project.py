"""A project's ``.mcp.json``: read once, and trusted for exactly what it would run.

The file's bytes are read once; the digest is taken of those bytes and the servers are
parsed from them, so a file swapped between two reads can never start a command under
another content's trust. Trust also covers every command or script of a stdio server that
lives inside the project (``./server.sh``, ``python tools/srv.py``): its bytes join the
digest, so a changed script is asked about again. With no such file the digest is the
file's own SHA-256, as trusted before scripts were covered.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from dsh_cli.core.errors import ConfigError, PrivateFileError
from dsh_cli.tools.mcp.config import PROJECT_FILE, ServerConfig, decode_file, parse_servers

__all__ = ["MAX_PROJECT_FILE", "project_digest", "project_servers"]

MAX_PROJECT_FILE = 1024 * 1024  # bytes of .mcp.json read, at most: it is a few lines
_SCHEME = b"dsh project trust 2\n"


def project_servers(cwd: Path, *, trust_now: bool, config_dir: Path,
                    environ: Mapping[str, str],
                    notice: Callable[[str], None] | None = None) -> list[ServerConfig]:
    """The servers of ``cwd/.mcp.json`` when it is trusted (``trust_now``: from now on).

    An untrusted, changed or unreadable file gives no servers and one ``notice``; with
    ``trust_now`` a bad file is a ``ConfigError`` instead (nothing bad is trusted).
    """
    from dsh_cli.tools.mcp.trust import FILE_NAME, ProjectTrust

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
        digest = project_digest(data, servers, where, cwd)
        trust = ProjectTrust(config_dir / FILE_NAME)
        try:
            if trust_now:
                trust.trust(where, digest)
                return servers
            if trust.trusted(where, digest):
                return servers
        except PrivateFileError as error:
            # a trust file that cannot be trusted trusts nothing, and is not written over
            if trust_now:
                raise ConfigError(f"{error.message}; {path} is not trusted") from None
            if notice is not None:
                notice(f"{error.message}; the servers of {path} are left out")
            return []
    if notice is not None:
        notice(f"{path} is not trusted (it can run commands), or it or a script it runs "
               "changed since, so its servers are left out; pass --mcp-project to trust it")
    return []


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


def project_digest(data: bytes, servers: list[ServerConfig], root: Path, cwd: Path) -> str:
    """What trusting this project covers: the file's bytes and the scripts inside ``root``."""
    scripts = sorted({script for server in servers for script in _scripts(server, root, cwd)})
    own = hashlib.sha256(data).hexdigest()
    if not scripts:
        return own
    digest = hashlib.sha256(_SCHEME + own.encode() + b"\n")
    for name in scripts:
        digest.update(f"{name}\0{_file_digest(cwd / name)}\n".encode())
    return digest.hexdigest()


def _scripts(server: ServerConfig, root: Path, cwd: Path) -> list[str]:
    """The files inside the project that starting ``server`` runs or reads as an argument,
    relative to ``cwd``; a link inside the project counts by what it points to."""
    if server.command is None:
        return []
    base = cwd / server.cwd if server.cwd else cwd
    here = Path(os.path.abspath(cwd))
    # a bare command name is looked up on PATH, not in the project; an argument is a path
    named = [server.command] if "/" in server.command else []
    found = []
    for word in (*named, *server.args):
        if not word or word.startswith("-") or "\0" in word:
            continue
        try:
            spelled = Path(os.path.abspath(base / word))
            real = spelled.resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if real.is_file() and (spelled.is_relative_to(here) or real.is_relative_to(root)):
            found.append(os.path.relpath(spelled, here))
    return found


def _file_digest(path: Path) -> str:
    try:
        with open(path, "rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return "unreadable"
