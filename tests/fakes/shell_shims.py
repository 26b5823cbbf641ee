"""What a real shell executes: programs on ``PATH`` that record their argv and do nothing.

``Sandbox.make(folder)`` makes ``folder/bin`` of shims (``git``, ``rm``, ``touch`` …, each
writing its name and arguments to ``$SHIM_LOG.PID``) plus links to the real
shells, so ``bash -c 'rm x'`` inside a command is recorded too. ``executed(shell, command)``
runs ``SHELL -c COMMAND`` with only that ``PATH``, in the sandbox, and returns every argv
the shims saw. Each call has its own log, each shim run its own file: nothing is shared.
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
# each run writes a file of its own: shims running at once (a pipe, ``<(…)``) never mix
_SHIM = '#!/bin/sh\nprintf \'%s\\0\' "${0##*/}" "$@" > "$SHIM_LOG.$$"\n'


def shell_path(name: str) -> str | None:
    """The real shell ``name`` on this machine, or None."""
    return shutil.which(name, path="/usr/bin:/bin:/usr/local/bin")


class Sandbox:
    """A folder whose ``bin`` holds recording shims; commands run with it as their cwd."""

    def __init__(self, folder: Path, *, tag: str = "") -> None:
        self.folder, self.bin, self.logs = folder, folder / "bin", folder / "logs"
        self._tag = tag  # another process using the sandbox names its logs apart
        self._calls = itertools.count()

    @classmethod
    def make(cls, folder: Path) -> Sandbox:
        """A new sandbox in ``folder``: the shims, links to the real shells, two files."""
        (folder / "bin").mkdir(parents=True)
        (folder / "logs").mkdir()
        for name in SHIMS:
            shim = folder / "bin" / name
            shim.write_text(_SHIM)
            shim.chmod(0o755)
        for name in SHELLS:
            real = shell_path(name)
            if real is not None:
                (folder / "bin" / name).symlink_to(real)
        (folder / "VICTIM").write_text("still here\n")
        (folder / "a.txt").write_text("")
        return cls(folder)

    def env(self, log: Path) -> dict[str, str]:
        return {"PATH": str(self.bin), "HOME": str(self.folder), "SHIM_LOG": str(log),
                "LC_ALL": "C.UTF-8"}

    def executed(self, shell: str, command: str) -> list[tuple[str, ...]]:
        """Every argv the shims saw while ``shell -c command`` ran (name first)."""
        real = shell_path(shell)
        assert real is not None, f"no {shell} on this machine"
        log = self.logs / f"{self._tag}{shell}-{next(self._calls)}.log"
        subprocess.run([real, "-c", command], cwd=self.folder, env=self.env(log),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        return read_log(log)


def read_log(log: Path) -> list[tuple[str, ...]]:
    """The argv of every shim run that logged under ``log``, in the order they started."""
    runs = sorted(log.parent.glob(log.name + ".*"), key=lambda path: path.stat().st_mtime_ns)
    return [tuple(os.fsdecode(field) for field in run.read_bytes().split(b"\0")[:-1])
            for run in runs]
