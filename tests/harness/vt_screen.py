"""What a terminal would show for a pty's output, read with pyte (the test extra's emulator).

prompt-toolkit's inline renderer redraws by difference (cursor moves, then only the changed
cells), so redrawn text rarely arrives whole in the byte stream: a test reads the screen.
``Screen.feed`` takes output, ``Screen.text`` is the rows as a terminal shows them.
"""

from __future__ import annotations

import time

import pyte

__all__ = ["Screen", "wait_for_screen"]


class Screen:
    """A ``rows``×``columns`` terminal screen."""

    def __init__(self, rows: int = 24, columns: int = 80) -> None:
        self._screen = pyte.Screen(columns, rows)
        self._stream = pyte.Stream(self._screen)  # keeps a sequence cut by a read

    def feed(self, data: str) -> None:
        self._stream.feed(data)

    def text(self) -> str:
        """The rows, trailing blanks dropped, one line each."""
        return "\n".join(row.rstrip() for row in self._screen.display).rstrip("\n")


def wait_for_screen(child, screen: Screen, text: str, timeout: float = 30.0, *,
                    gone: bool = False) -> str:
    """Feed the child's output to ``screen`` until it shows ``text`` (with ``gone``: until
    it no longer does); the screen's text.

    The timeout only bounds a hang (it fails the test with the screen as it was).
    """
    import pexpect

    deadline = time.monotonic() + timeout
    while (text in screen.text()) is gone:
        if time.monotonic() > deadline:
            never = "never stopped showing" if gone else "never showed"
            raise AssertionError(f"the screen {never} {text!r}:\n{screen.text()}")
        try:
            screen.feed(child.read_nonblocking(4096, timeout=0.2))
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF as ended:
            raise AssertionError(f"dsh ended before showing {text!r}:\n{screen.text()}") \
                from ended
    return screen.text()
