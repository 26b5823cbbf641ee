"""Slash commands of the chat: ``/help``, ``/exit``, ``/new``, ``/model``, ``/sessions``,
and the async questions' ``/pending``, ``/answer``, ``/cancel``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import HarnessError, format_line
from dsh_cli.core.events import SessionStarted
from dsh_cli.core.sanitize import one_line, sanitize_line

if TYPE_CHECKING:
    from dsh_cli.runtime import Runtime

__all__ = ["COMMANDS", "EXIT", "RESUMED", "Command", "run_command", "start_new_session"]

EXIT = object()
RESUMED = object()  # the chat switched sessions: the REPL finishes a pending batch first
KEYS = ("keys: enter send · alt-enter (or esc then enter) new line · ↑ history · "
        "f2 answer a pending async question · "
        "ctrl-c stop the reply (or cancel a question) · ctrl-d exit")


@dataclass(frozen=True)
class Command:
    """A slash command: ``handler(repl, argument)`` returns ``EXIT`` to end the chat."""

    help: str
    handler: Callable[[Any, str], object | Awaitable[object]]


def _help(repl: Any, argument: str) -> None:
    for name, command in COMMANDS.items():
        if name != "quit":  # named on /exit's line: one line per thing to do
            repl.renderer.line(f"/{name:<9} {command.help}", indent=11)  # under the help
    repl.renderer.line(KEYS, dim=True, indent=6)


def _exit(repl: Any, argument: str) -> object:
    return EXIT


def _new(repl: Any, argument: str) -> None:
    session_id = start_new_session(repl.runtime)
    repl.renderer.line(f"new session {session_id}", dim=True)


def _model(repl: Any, argument: str) -> None:
    from dsh_cli.models.resolve import needs_api_key

    if argument:
        repl.runtime.switch_model(argument)  # a ModelError is one line, the model unchanged
    settings = repl.runtime.settings
    name = repl.runtime.model.name
    from dsh_cli.core.urls import masked

    where = f" at {sanitize_line(masked(settings.base_url))}" if needs_api_key(name) else ""
    if argument:
        repl.renderer.line(f"model {sanitize_line(name)}{where} from the next message on")
    else:
        repl.renderer.line(f"model {sanitize_line(name)}{where} (switch with /model NAME)")


def _sessions(repl: Any, argument: str) -> None:
    store = repl.runtime.store
    if store is None:
        repl.renderer.line("sessions are not being stored")
        return
    sessions = list(store.list_sessions())[:10]
    if not sessions:
        repl.renderer.line("no stored sessions yet")
    for session in sessions:
        current = "*" if session.id == repl.runtime.session_id else " "
        title = one_line(session.shown_title, 50)
        updated = session.updated_at[:16].replace("T", " ")
        who = sanitize_line(session.shown_who)
        repl.renderer.line(f"{current} {session.id}  {updated}  {session.kind:<5}  {who}  "
                           f"{title}")
    repl.renderer.line("switch to a chat with /resume ID (a unique prefix will do)", dim=True)


def _resume(repl: Any, argument: str) -> object | None:
    """Switch the chat to another stored session; a batch it had pending is asked again."""
    if not argument:
        repl.renderer.line("usage: /resume ID (see /sessions)")
        return None
    session_id = repl.runtime.switch_session(argument)
    repl.renderer.line(f"dsh · resumed session {session_id}", dim=True)
    repl.renderer.replay(repl.runtime.loop.messages)
    return RESUMED


def _pending(repl: Any, argument: str) -> None:
    """The async question batches waiting for the human, oldest first."""
    lines = repl.runtime.ui.later.listing()
    if not lines:
        repl.renderer.line("no async question is pending")
        return
    for line in lines:
        repl.renderer.line(line)
    repl.renderer.line("answer one with /answer [TICKET] (or f2), dismiss it with "
                       "/cancel TICKET", dim=True)


async def _answer(repl: Any, argument: str) -> None:
    """Draw a pending async batch now (the oldest, or TICKET)."""
    later = repl.runtime.ui.later
    if not later.drawn_here():
        repl.renderer.line("async questions are answered where they are shown here")
        return
    if not await later.show(argument or None):
        repl.renderer.line("left pending (/pending lists it)", dim=True)


async def _cancel(repl: Any, argument: str) -> None:
    """Dismiss a pending async batch: the model is told ``ASK_CANCELLED``."""
    if not argument:
        repl.renderer.line("usage: /cancel TICKET (see /pending)")
        return
    await repl.runtime.ui.later.cancel(argument)


COMMANDS: dict[str, Command] = {
    "help": Command("show the commands and keys", _help),
    "exit": Command("end the chat (also /quit, ctrl-d)", _exit),
    "quit": Command("end the chat", _exit),
    "new": Command("start a new session (the conversation so far is kept in the store)", _new),
    "model": Command("show the model in use; /model NAME switches to NAME", _model),
    "sessions": Command("list recent stored sessions", _sessions),
    "resume": Command("switch to a stored session: /resume ID", _resume),
    "pending": Command("list the async questions waiting for your answer", _pending),
    "answer": Command("answer a pending async question: /answer [TICKET]", _answer),
    "cancel": Command("dismiss a pending async question: /cancel TICKET", _cancel),
}


async def run_command(repl: Any, text: str) -> object | None:
    """Run ``/name argument``; an unknown name gets a hint, a failure one line."""
    name, _, argument = text[1:].partition(" ")
    command = COMMANDS.get(name.lower())
    if command is None:
        repl.renderer.line(f"unknown command /{one_line(name, 40)}; /help lists them")
        return None
    try:
        outcome = command.handler(repl, argument.strip())
        return await outcome if inspect.isawaitable(outcome) else outcome
    except HarnessError as error:
        repl.renderer.line(format_line(error.code, error.message))
        return None


def start_new_session(runtime: Runtime) -> str:
    """A fresh conversation on the same model, tools and system prompt; its id."""
    session_id = runtime.new_session()
    runtime.events.emit(SessionStarted(session_id, runtime.model.name))
    return session_id
