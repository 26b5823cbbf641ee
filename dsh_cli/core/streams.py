"""Standard streams at the process edge: whether one is a terminal, and a reader gone away."""

from __future__ import annotations

import os

__all__ = ["SIGPIPE_STATUS", "is_terminal", "stdout_gone"]

# what a shell reports for a program ended by SIGPIPE (128 + 13): `dsh … | head -1`
SIGPIPE_STATUS = 141


def is_terminal(stream: object) -> bool:
    """True for a terminal; False for pipes, files, in-memory and closed streams."""
    try:
        if isinstance(stream, int):
            return os.isatty(stream)
        isatty = getattr(stream, "isatty", None)
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):  # a closed stream or descriptor is no terminal
        return False


def stdout_gone() -> int:
    """The reader of stdout went away: silence the final flush, return ``SIGPIPE_STATUS``."""
    import sys

    # Python flushes stdout again at exit and would print a second BrokenPipeError there
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no descriptor: nothing left to flush
        pass
    return SIGPIPE_STATUS
