"""What a terminal would show for a pty's output: enough of VT100 for prompt-toolkit's inline
renderer, which redraws by difference (cursor moves, then only the changed cells).

A test reads the screen rather than the byte stream, since redrawn text rarely arrives
whole: ``Screen.feed`` takes output, ``Screen.text`` is the rows as a terminal shows them.
"""

from __future__ import annotations

import re
import time

__all__ = ["Screen", "wait_for_screen"]

# CSI with parameters, an OSC up to BEL/ST, or a two-byte escape (charset, keypad, …)
_ESCAPE = re.compile(r"\x1b\[([0-9;?]*)([ -/]*[@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
                     r"|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


class Screen:
    """A ``rows``×``columns`` grid with a cursor; control sequences it does not need are
    skipped (colours, modes)."""

    def __init__(self, rows: int = 24, columns: int = 80) -> None:
        self.rows, self.columns = rows, columns
        self.grid = [[" "] * columns for _ in range(rows)]
        self.row = self.column = 0
        self._pending = ""  # an escape sequence cut by a read, completed by the next

    def feed(self, data: str) -> None:
        data, self._pending = self._pending + data, ""
        position = 0
        while position < len(data):
            if data[position] == "\x1b":
                match = _ESCAPE.match(data, position)
                if match is None:
                    if len(data) - position < 16:  # cut by a read: wait for the rest
                        self._pending = data[position:]
                        return
                    position += 1  # an escape this screen does not know: drop the ESC
                    continue
                if match.group(2):
                    self._control(match.group(1), match.group(2))
                position = match.end()
            else:
                self._char(data[position])
                position += 1

    def text(self) -> str:
        """The rows, trailing blanks dropped, one line each."""
        return "\n".join("".join(row).rstrip() for row in self.grid)

    def _char(self, char: str) -> None:
        if char == "\r":
            self.column = 0
        elif char == "\n":
            self._line_feed()
        elif char == "\b":
            self.column = max(0, self.column - 1)
        elif char.isprintable():
            self.grid[self.row][min(self.column, self.columns - 1)] = char
            self.column = min(self.column + 1, self.columns)

    def _line_feed(self) -> None:
        if self.row + 1 < self.rows:
            self.row += 1
        else:  # at the bottom the screen scrolls up
            self.grid = [*self.grid[1:], [" "] * self.columns]

    def _control(self, params: str, final: str) -> None:
        if params.startswith("?"):
            return  # private modes: cursor visibility, autowrap, bracketed paste
        numbers = [int(part) if part else 0 for part in params.split(";")] if params else []
        count = max(1, numbers[0]) if numbers else 1
        if final == "A":
            self.row = max(0, self.row - count)
        elif final == "B":
            self.row = min(self.rows - 1, self.row + count)
        elif final == "C":
            self.column = min(self.columns - 1, self.column + count)
        elif final == "D":
            self.column = max(0, self.column - count)
        elif final == "H":
            row, column = [*numbers, 1, 1][:2]
            self.row, self.column = max(0, row - 1), max(0, column - 1)
        elif final == "K":
            self._erase_line(numbers[0] if numbers else 0)
        elif final == "J":
            self._erase_screen(numbers[0] if numbers else 0)

    def _erase_line(self, mode: int) -> None:
        line = self.grid[self.row]
        start, end = {0: (self.column, self.columns), 1: (0, self.column + 1)}.get(
            mode, (0, self.columns))
        line[start:end] = [" "] * (min(end, self.columns) - start)

    def _erase_screen(self, mode: int) -> None:
        if mode == 0:
            self._erase_line(0)
            for row in range(self.row + 1, self.rows):
                self.grid[row] = [" "] * self.columns
        elif mode == 2:
            self.grid = [[" "] * self.columns for _ in range(self.rows)]


def wait_for_screen(child, screen: Screen, text: str, timeout: float = 30.0) -> str:
    """Feed the child's output to ``screen`` until it shows ``text``; the screen's text.

    The timeout only bounds a hang (it fails the test with the screen as it was).
    """
    import pexpect

    deadline = time.monotonic() + timeout
    while text not in screen.text():
        if time.monotonic() > deadline:
            raise AssertionError(f"the screen never showed {text!r}:\n{screen.text()}")
        try:
            screen.feed(child.read_nonblocking(4096, timeout=0.2))
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF as ended:
            raise AssertionError(f"dsh ended before showing {text!r}:\n{screen.text()}") \
                from ended
    return screen.text()
