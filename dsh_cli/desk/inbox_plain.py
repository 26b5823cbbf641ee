"""The inbox as plain lines (``dsh attach --plain``, a pipe, ``TERM=dumb``).

The line protocol, one line each, so a human or a script can follow it:

- out, as the list changes: ``+ N. [kind] who · what · age`` (an entry arrived),
  ``- N. why`` (it left: answered, cancelled, timed out, its server gone),
  ``~ N. taken at another desk`` and ``~ N. free again``; ``nothing pending — …`` once
  the list is empty;
- in, at the list: ``N`` opens entry N (its questions follow as plain prompts),
  ``x N`` dismisses it (a batch is cancelled, a permission request denied), ``l`` (or
  an empty line) lists every entry (``inbox: K pending`` and one ``  N. …`` line each);
  end of input closes the desk.

``N`` is the entry's arrival number (``desk/inbox.py``), never reused, so a number read
before the list changed still names the same entry or none. While an entry is open its
prompts own the screen: the changes meanwhile are kept and printed, in order, on the way
back to the list, so none is lost and none lands inside a prompt.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import IO

from dsh_cli.core.lines import notice
from dsh_cli.desk.desk import IDLE, Pick
from dsh_cli.desk.inbox import Inbox, InboxChange

__all__ = ["HELP", "PlainInbox", "change_line"]

HELP = notice("at the list: a number opens that entry, `x N` dismisses it, `l` lists them "
              "all, end of input closes the desk")


def change_line(change: InboxChange, now: float) -> str:
    """The one line a change of the list prints."""
    entry = change.entry
    if change.kind == "added":
        return "+ " + entry.line(now)
    if change.kind == "removed":
        return f"- {entry.number}. {change.reason or 'settled'}"
    if change.kind == "taken":
        return f"~ {entry.number}. " + (f"taken by {entry.taken_by}" if entry.taken_by
                                       else "taken at another desk")
    return f"~ {entry.number}. free again"


class PlainInbox:
    """A ``Picker`` on lines: it prints the list's changes and reads what to open."""

    def __init__(self, output: IO[str], readline: Callable[[], Awaitable[str | None]]) -> None:
        self.output = output
        self._readline = readline
        self._held: list[str] = []  # changes while an entry is open, printed after it
        self._at_list = False
        self._subscribed: Inbox | None = None
        self._empty_said = False

    def _say(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.output.write(line + "\n")
            self.output.flush()

    def _heard(self, inbox: Inbox, change: InboxChange) -> None:
        line = change_line(change, inbox.now())
        if not self._at_list:
            self._held.append(line)
            return
        self._say(line)
        self._say_if_empty(inbox)

    def _say_if_empty(self, inbox: Inbox) -> None:
        if len(inbox) == 0 and not self._empty_said:
            self._say(IDLE)
        self._empty_said = len(inbox) == 0

    def list_lines(self, inbox: Inbox) -> list[str]:
        """``inbox: K pending`` and one line per entry, in arrival order."""
        now = inbox.now()
        return [f"inbox: {len(inbox)} pending",
                *("  " + entry.line(now) for entry in inbox.entries())]

    async def pick(self, inbox: Inbox) -> Pick:
        if self._subscribed is not inbox:
            inbox.subscribe(lambda change: self._heard(inbox, change))
            self._subscribed = inbox
        self._at_list = True
        for line in self._held:
            self._say(line)
        self._held.clear()
        self._empty_said = False
        self._say_if_empty(inbox)
        try:
            while True:
                read = await self._readline()
                if read is None:
                    return Pick("close")
                chosen = self._interpret(inbox, read.strip())
                if chosen is not None:
                    return chosen
        finally:
            self._at_list = False

    def _interpret(self, inbox: Inbox, line: str) -> Pick | None:
        if line in ("", "l", "list"):
            for shown in self.list_lines(inbox):
                self._say(shown)
            return None
        action, _, number = line.partition(" ") if line.startswith("x ") else ("", "", line)
        number = number.strip()
        if not (number.isascii() and number.isdigit()):
            self._say(HELP)
            return None
        entry = inbox.numbered(int(number))
        if entry is None:
            self._say(notice(f"no entry {number} is pending (`l` lists them)"))
            return None
        return Pick("dismiss" if action == "x" else "open", entry)
