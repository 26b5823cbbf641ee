"""Keys typed before the question UI is drawn: never echoed raw on the terminal.

The kernel echoes a key the moment it is typed, long before prompt-toolkit takes the
terminal, so ``2`` or ``^[[A`` would land in the scrollback. Commands that will draw the UI
turn echo off as soon as they start; the UI discards what was typed when it appears.
Imports only the standard library: it runs before anything heavy is loaded.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

__all__ = ["echo_off"]


@contextlib.contextmanager
def echo_off(enabled: bool = True) -> Iterator[None]:
    """Echo off on the controlling terminal until the block ends, then exactly as it was."""
    fd, opened = _terminal_fd() if enabled else (None, False)
    if fd is None:
        yield
        return
    import termios

    try:
        saved = termios.tcgetattr(fd)
        quiet = termios.tcgetattr(fd)
        quiet[3] &= ~(termios.ECHO | termios.ECHONL)
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except (termios.error, OSError):  # not ours to change (say, a background job)
        saved = None
    try:
        yield
    finally:
        if saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(fd, termios.TCSANOW, saved)
        if opened:
            os.close(fd)


def _terminal_fd() -> tuple[int | None, bool]:
    """Standard input when it is the terminal, else ``/dev/tty``; (fd, opened by us)."""
    try:
        if sys.stdin is not None and os.isatty(sys.stdin.fileno()):
            return sys.stdin.fileno(), False
    except (AttributeError, OSError, ValueError):
        pass
    try:
        return os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY), True
    except OSError:
        return None, False
