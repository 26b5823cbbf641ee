"""What the surroundings offer an answer source: a dumb terminal, a /dev/tty, a display."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

__all__ = ["TTY", "browser_available", "dumb_terminal", "tty_available"]

TTY = "/dev/tty"


def dumb_terminal(environ: Mapping[str, str]) -> bool:
    """``TERM=dumb``: no cursor addressing, so questions take the plain line rendering."""
    return environ.get("TERM") == "dumb"


def tty_available() -> bool:
    """Whether this process has a controlling terminal to draw on when stdio is redirected."""
    try:
        os.close(os.open(TTY, os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def browser_available(environ: Mapping[str, str]) -> bool:
    """Whether ``--open`` is the default: a display to open a browser on."""
    if sys.platform in ("darwin", "win32"):
        return not environ.get("SSH_CONNECTION")
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))
