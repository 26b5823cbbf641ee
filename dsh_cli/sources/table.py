"""The answer-source table: which one provider answers the questions of each front door.

A row is a name, a predicate on the ``AnswerOptions`` (flags, streams, environment) and an
opener (``openers.py``). A door (``RUN``, ``ASK``, ``CHAT``, ``WEB``, ``ACP``, ``MCP``) tries
its rows in its documented order and falls back to its ``otherwise`` row; ``answer_source``
opens the chosen row, registers its provider on the ``UserInteraction``, and disposes and
closes it on the way out, however the block ends:

    async with answer_source(runtime.ui, AnswerOptions(RUN, plain=True)) as source:
        ...  # source.name == "plain"; source.provider answers runtime.ui's questions

``prepare`` is the first half alone (choose the row, do what needs no ``ui``: read an
answers file), for a door that must fail on a bad file before it opens a session.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh_cli.sources import openers
from dsh_cli.sources.options import AnswerOptions, Door, Source

if TYPE_CHECKING:
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.permissions import PermissionGate

__all__ = ["ACP", "ASK", "CHAT", "DOORS", "MCP", "ROWS", "RUN", "WEB", "Prepared", "Row",
           "answer_source", "choose", "draws_on_terminal", "prepare"]


@dataclass(frozen=True)
class Row:
    """A named answer source: when it applies, and how it is opened."""

    name: str
    applies: Callable[[AnswerOptions], bool]
    opener: Callable[[AnswerOptions], openers.Opener]


ROWS: dict[str, Row] = {row.name: row for row in (
    Row("jsonl", lambda o: o.jsonl, openers.jsonl),
    Row("web", lambda o: o.web, openers.web),
    Row("answers", lambda o: o.answers is not None, openers.answers),
    Row("plain", lambda o: o.plain or (o.dumb and o.terminal is not None), openers.plain),
    Row("terminal", lambda o: o.terminal is not None and not o.dumb, openers.terminal),
    Row("none", lambda o: True, openers.none),
)}

# The orders of cli.md and terminal.md.
RUN = Door("run", ("jsonl", "web", "answers", "plain", "terminal"), otherwise="none",
           draws_on="stderr", reports_answer_failures=True, interrupts=True)
ASK = Door("ask", ("jsonl", "web", "answers", "plain", "terminal"), otherwise="none",
           draws_on="stdout", tty_fallback=True, questions_only=True,
           nobody="no terminal to ask on; use --answers, --plain or --jsonl")
CHAT = Door("chat", ("plain", "terminal"), otherwise="plain", draws_on="stdout",
            converses=True)
WEB = Door("web", ("web",), otherwise="web")
# dsh acp, for a client without form elicitation (acp.md): nobody else draws on its stdio
ACP = Door("acp", ("web", "answers"), otherwise="none")
# dsh mcp (mcp.md): stdout is the agent's; with neither row the attach desks answer, through
# the desk hub of dsh mcp itself (a layer above this table)
MCP = Door("mcp", ("answers", "web"), otherwise="none", reports_answer_failures=True)
DOORS: dict[str, Door] = {door.name: door for door in (RUN, ASK, CHAT, WEB, ACP, MCP)}


def choose(options: AnswerOptions) -> Row:
    """The first row of the door's order that applies, else the door's ``otherwise`` row."""
    door = options.door
    for name in door.order:
        if ROWS[name].applies(options):
            return ROWS[name]
    return ROWS[door.otherwise]


def draws_on_terminal(options: AnswerOptions) -> bool:
    """Whether the door's questions will be drawn by the terminal UI (echo must go off)."""
    return choose(options).name == "terminal" and options.provider is None


@dataclass(frozen=True)
class Prepared:
    """A chosen row whose work without a ``ui`` is done; ``attach(ui)`` opens the rest."""

    name: str
    opener: openers.Opener

    @contextlib.asynccontextmanager
    async def attach(self, ui: UserInteraction,
                     gate: PermissionGate | None = None) -> AsyncIterator[Source]:
        """Start the source, register its providers (questions on ``ui``, permission requests
        on ``gate`` when the session has one); dispose them and close the source after."""
        async with self.opener(ui) as source:
            with contextlib.ExitStack() as registered:
                if source.provider is not None:
                    registered.callback(ui.register_provider(source.provider))
                if gate is not None and source.permissions is not None:
                    registered.callback(gate.register_provider(source.permissions))
                yield source


def prepare(options: AnswerOptions) -> Prepared:
    """Choose the row and run its opener's first half; raises the source's ``HarnessError``."""
    row = choose(options)
    if options.provider is not None:
        return Prepared(row.name, openers.given(row.name, options.provider))
    return Prepared(row.name, row.opener(options))


@contextlib.asynccontextmanager
async def answer_source(ui: UserInteraction, options: AnswerOptions,
                        gate: PermissionGate | None = None) -> AsyncIterator[Source]:
    """``prepare`` and ``attach`` in one: the source that answers ``ui`` for this door."""
    async with prepare(options).attach(ui, gate) as source:
        yield source
