"""What a real shell executes: programs on ``PATH`` that record their argv and do nothing.

``Sandbox(folder)`` makes ``folder/bin`` of shims (``git``, ``rm``, ``touch`` …, each
appending its name and arguments to the log named by ``$SHIM_LOG``) plus links to the real
shells, so ``bash -c 'rm x'`` inside a command is recorded too. ``executed(shell, command)``
runs ``SHELL -c COMMAND`` with only that ``PATH``, in the sandbox, and returns every argv
the shims saw. Each call has its own log file, so tests (and calls) never share one.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path

SHIMS = ("git", "ls", "rm", "rmdir", "touch", "curl", "cat", "sudo", "env", "xargs", "find",
         "nohup", "grep")
SHELLS = ("bash", "zsh", "dash", "sh")
_SHIM = '#!/bin/sh\n{ printf \'%s\\0\' "${0##*/}" "$@"; printf \'\\036\\0\'; } >> "$SHIM_LOG"\n'


def shell_path(name: str) -> str | None:
    """The real shell ``name`` on this machine, or None."""
    return shutil.which(name, path="/usr/bin:/bin:/usr/local/bin")


class Sandbox:
    """A folder whose ``bin`` holds recording shims; commands run with it as their cwd."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True)
        self.logs = folder / "logs"
        self.logs.mkdir()
        for name in SHIMS:
            shim = self.bin / name
            shim.write_text(_SHIM)
            shim.chmod(0o755)
        for name in SHELLS:
            real = shell_path(name)
            if real is not None:
                (self.bin / name).symlink_to(real)
        (folder / "VICTIM").write_text("still here\n")
        (folder / "a.txt").write_text("")
        self._calls = itertools.count()

    def env(self, log: Path) -> dict[str, str]:
        return {"PATH": str(self.bin), "HOME": str(self.folder), "SHIM_LOG": str(log),
                "LC_ALL": "C.UTF-8"}

    def executed(self, shell: str, command: str) -> list[tuple[str, ...]]:
        """Every argv the shims saw while ``shell -c command`` ran (name first)."""
        real = shell_path(shell)
        assert real is not None, f"no {shell} on this machine"
        log = self.logs / f"{shell}-{next(self._calls)}.log"
        subprocess.run([real, "-c", command], cwd=self.folder, env=self.env(log),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        return read_log(log)


def read_log(log: Path) -> list[tuple[str, ...]]:
    """The argv records of one shim log, in the order they were written."""
    if not log.exists():
        return []
    records, current = [], []
    for field in log.read_bytes().split(b"\0")[:-1]:
        if field == b"\x1e":
            records.append(tuple(current))
            current = []
        else:
            current.append(os.fsdecode(field))
    return records
