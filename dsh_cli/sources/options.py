"""What a front door asks of the answer-source table, and what it gets back."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TextIO

from dsh_cli.core.streams import is_terminal
from dsh_cli.sources import surroundings

if TYPE_CHECKING:
    from dsh_cli.interaction import UserInteractionProvider
    from dsh_cli.permissions import PermissionProvider
    from dsh_cli.providers.line_reader import LineReader
    from dsh_cli.providers.relay import JsonLinesRelay
    from dsh_cli.providers.web import WebHost

__all__ = ["AnswerOptions", "Door", "Source"]


@dataclass(frozen=True)
class Door:
    """A front door's part of the table: its rows in order, and where its terminal UI draws."""

    name: str
    order: tuple[str, ...]  # row names, tried first to last
    otherwise: str  # the row when none of them applies
    draws_on: str | None = None  # "stdout" or "stderr": used when stdin and it are terminals
    tty_fallback: bool = False  # else /dev/tty, when this process has one
    nobody: str | None = None  # NO_PROVIDER at once with this message when "none" is chosen
    questions_only: bool = False  # the relay writes question events only, no user/message
    reports_answer_failures: bool = False  # an answers-file failure goes to stderr as well
    interrupts: bool = False  # ctrl-c at a question interrupts the command (130), esc cancels
    converses: bool = False  # a conversation goes on: the human may leave a batch to discuss it


@dataclass
class AnswerOptions:
    """The answer-source flags of one command line, and the streams and environment they act on."""

    door: Door
    jsonl: bool = False
    web: bool = False
    answers: str | None = None  # an answers file
    plain: bool = False
    no_input: bool = False
    host: str = "127.0.0.1"
    port: int = 0
    open_browser: bool | None = None  # None: when a display is available
    stdin_busy: bool = False  # stdin carries the input itself (``dsh ask -``, ``dsh run -``)
    keep: bool = True  # the terminal UI leaves its one-line summary (``dsh ask`` clears it)
    # ``dsh web``: the browser's chat messages, and the conversation a new page is shown
    on_message: Callable[[str], Any] | None = None
    transcript: list[dict[str, Any]] | None = None
    # a provider the caller brings (tests, embedding): it answers in place of the chosen
    # row's own, and the choice still names the row so the door renders for it
    provider: UserInteractionProvider | None = None
    # a conversation's own slash commands (the chat's): plain mode never takes one typed
    # at a question for an Other answer
    commands: frozenset[str] = frozenset()
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)

    @cached_property
    def dumb(self) -> bool:
        """``TERM=dumb``: decided here, once, for every door."""
        return surroundings.dumb_terminal(self.environ)

    @cached_property
    def terminal(self) -> str | None:
        """Where a terminal UI would draw: ``stdout``, ``stderr``, ``tty`` (/dev/tty) or None."""
        door = self.door
        if self.no_input or door.draws_on is None:
            return None
        screen = self.stdout if door.draws_on == "stdout" else self.stderr
        if not self.stdin_busy and is_terminal(self.stdin) and is_terminal(screen):
            return door.draws_on
        # stdin holds the input itself (`git diff | dsh run -`): the keyboard is /dev/tty
        if (door.tty_fallback or self.stdin_busy) and surroundings.tty_available():
            return "tty"
        return None


@dataclass
class Source:
    """The source that answers, as a door uses it; ``provider`` is None for ``none``.

    ``permissions`` answers the session's permission requests in the same place, or is
    None where nothing can (rules only: ``NO_PERMISSION_PROVIDER``).
    """

    name: str
    provider: UserInteractionProvider | None
    permissions: PermissionProvider | None = None
    relay: JsonLinesRelay | None = None  # jsonl: the controlling program's user/message frames
    host: WebHost | None = None  # web: the live host (its URL, its feed)
    lines: LineReader | None = None  # plain on stdin: the reader a line prompt must share
