"""Files only their owner may read: the session store and the prompt history."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["create_private_file"]


def create_private_file(path: Path) -> None:
    """Create ``path`` 0600 (its directory 0700) unless it exists; ``OSError`` if it cannot.

    Created before anything writes to it, so what it will hold (everything typed, every
    message; SQLite's journal files copy the mode) is never readable by others meanwhile.
    A symbolic link in its place is never followed (``O_NOFOLLOW``): nothing is created at
    its target.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return
    os.close(fd)
