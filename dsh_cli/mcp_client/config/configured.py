"""Every server a session is configured with: the user's file, a trusted project's, flags'."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from dsh_cli.mcp_client.config.project import project_servers
from dsh_cli.mcp_client.config.servers import USER_FILE, ServerConfig, load_servers

__all__ = ["configured_servers"]


def configured_servers(files: Iterable[str | Path], *, project: bool, cwd: Path,
                       config_dir: Path, environ: Mapping[str, str] | None = None,
                       notice: Callable[[str], None] | None = None) -> list[ServerConfig]:
    """Every configured server; a later file's server replaces an earlier one's.

    ``mcp.json`` in the config directory, then the project's ``.mcp.json`` when ``project``
    (``--mcp-project``, which trusts it from now on) or when it was trusted before exactly
    as it is (``project.py``), then every ``--mcp-config FILE``. An untrusted project file
    is left out with one ``notice`` saying how to trust it. Each file is read once.
    """
    environ = os.environ if environ is None else environ
    user = config_dir / USER_FILE
    servers = load_servers([user], environ) if user.is_file() else []
    servers += project_servers(cwd, trust_now=project, config_dir=config_dir,
                               environ=environ, notice=notice)
    servers += load_servers([Path(file) for file in files], environ)
    return list({server.name: server for server in servers}.values())
