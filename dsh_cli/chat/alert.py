"""The alert when a question appears, so a human who looked away comes back to answer it."""

from __future__ import annotations

from typing import TextIO

from dsh_cli.core.events import Event, QuestionRequested
from dsh_cli.core.lines import notice
from dsh_cli.core.streams import is_terminal
from dsh_cli.core.terminal_alert import BELL, encode

__all__ = ["BELL", "OSC9", "QuestionAlert"]

# OSC 9 is a desktop notification in iTerm2, WezTerm, kitty, Windows Terminal and others.
OSC9 = encode("osc9", notice("a question is waiting for you"))


class QuestionAlert:
    """An ``EventStream`` listener: ``bell``, ``osc9`` or ``none`` on each question batch."""

    def __init__(self, stream: TextIO, mode: str = "bell") -> None:
        self.stream = stream
        self.mode = mode

    def __call__(self, event: Event) -> None:
        if isinstance(event, QuestionRequested):
            self.ring()

    def ring(self) -> None:
        """The alert itself (the plain desk rings it per entry that arrives)."""
        if self.mode == "none":
            return
        if not is_terminal(self.stream):
            return  # a pipe or a file gets no control characters
        self.stream.write(OSC9 if self.mode == "osc9" else BELL)
        self.stream.flush()
