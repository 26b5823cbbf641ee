"""Keys typed before the question UI or the permission prompt is drawn: never echoed raw,
never taken as an answer.

The kernel echoes a key the moment it is typed, long before prompt-toolkit takes the
terminal, so ``2`` or ``^[[A`` would land in the scrollback. Commands that will draw the UI
turn echo off as soon as they start; the UI (questions and permission prompt alike) calls
``discard_typeahead`` when it appears, so a digit typed ahead picks nothing unseen.
Imports only the standard library: it runs before anything heavy is loaded.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["discard_typeahead", "echo_off"]


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


def discard_typeahead(input: Any, output: Any = None) -> bool:
    """Drop keys typed before the UI appeared (say, while a reply streamed); whether there
    were any.

    Otherwise a digit typed ahead would silently pick an option (or grant a permission) the
    human never saw. With ``output`` (prompt-toolkit's), a line the terminal echoed them on
    is cleared, so the frame starts at column 0.
    """
    try:
        fd = input.fileno()
    except (AttributeError, NotImplementedError, OSError, ValueError):
        return False
    if not os.isatty(fd):
        return False
    import fcntl
    import struct
    import termios

    pending = 0
    with contextlib.suppress(termios.error, OSError):
        # in canonical mode the count leaves out an unfinished line ("2" without enter)
        saved = termios.tcgetattr(fd)
        raw = termios.tcgetattr(fd)
        raw[3] &= ~termios.ICANON
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        try:
            pending = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
            termios.tcflush(fd, termios.TCIFLUSH)
        finally:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
    if pending > 0 and output is not None:
        # the terminal echoed those keys before dsh could turn echo off ("2 Deploy now?")
        output.write_raw("\r\x1b[K")
        output.flush()
    return pending > 0
