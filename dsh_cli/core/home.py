"""Where dsh keeps its files: the one reader of ``DSH_HOME`` and the one place that names them.

``DSH_HOME`` puts config, data and the desk sockets under one directory (tests give each
test its own); without it the platform's directories are used (``platformdirs``). Every
path dsh keeps a file at is built here, so two modules can never disagree on one.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["APPROVALS_FILE", "HOME_VARIABLE", "approvals_file", "config_dir", "data_dir",
           "dsh_home", "home_run_dir"]

HOME_VARIABLE = "DSH_HOME"
APPROVALS_FILE = "permissions.json"  # saved "always" approvals, in the config directory


def dsh_home() -> Path | None:
    """``DSH_HOME`` when it is set (and not empty), else None."""
    home = os.environ.get(HOME_VARIABLE)
    return Path(home) if home else None


def config_dir() -> Path:
    """Settings and what the human granted: ``DSH_HOME``, else the user's config directory."""
    home = dsh_home()
    if home is not None:
        return home
    from platformdirs import user_config_path

    return user_config_path("dsh", appauthor=False)


def data_dir() -> Path:
    """The session store and the prompt history: ``DSH_HOME``, else the user's data directory."""
    home = dsh_home()
    if home is not None:
        return home
    from platformdirs import user_data_path

    return user_data_path("dsh", appauthor=False)


def home_run_dir() -> Path | None:
    """The desk sockets' directory under ``DSH_HOME`` (``DSH_HOME/run``), if it is set."""
    home = dsh_home()
    return home / "run" if home is not None else None


def approvals_file() -> Path:
    """``permissions.json`` of the config directory: the saved "always" approvals."""
    return config_dir() / APPROVALS_FILE
