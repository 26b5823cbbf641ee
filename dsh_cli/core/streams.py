"""Whether a stream is a terminal, for anything a command may hand over as one."""

from __future__ import annotations

import os

__all__ = ["is_terminal"]


def is_terminal(stream: object) -> bool:
    """True for a terminal; False for pipes, files, in-memory and closed streams."""
    try:
        if isinstance(stream, int):
            return os.isatty(stream)
        isatty = getattr(stream, "isatty", None)
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):  # a closed stream or descriptor is no terminal
        return False
