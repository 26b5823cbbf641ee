"""The pending-question table: every batch being shown, keyed by its ``rpc_id``.

It is the one place a batch is settled, whoever answers it: the provider that draws it,
or a controller from outside the process (the JSON-lines relay, a browser). Settlement
is first-wins: claiming an entry removes it at once, so a duplicate or late response is
refused as ``not-pending``. The batch's abort signal settles here too, at the moment it is
aborted (not when its waiter next runs), and a batch settled otherwise seals its signal: an
abort that comes second is refused, so a cancel never undoes an answer the desk was told
counts (``core/signal.py``). Every verb (answer, cancel, decline, discuss) first passes the
one ownership rule (``core/ownership.py``): a frame for another session is
``wrong-session``. A response that does not fit its request is refused as
``bad-response``; either way the batch stays pending, so the controller can try again.
The table knows nothing about stdio or HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dsh_cli.core.errors import UserInteractionError, discuss_instead
from dsh_cli.core.events import (
    BAD_RESPONSE,
    NOT_PENDING,
    WRONG_SESSION,
    QuestionRequested,
    ResponseAck,
)
from dsh_cli.core.ids import mint_rpc_id
from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.ownership import refusal
from dsh_cli.interaction.validation import validate_answer
from dsh_cli.interaction.vocabulary import (
    AskContext,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    Deadline,
)

__all__ = [
    "BAD_RESPONSE", "NOT_PENDING", "WRONG_SESSION", "PendingEntry", "PendingQuestions",
    "declined",
]



@dataclass(eq=False)
class PendingEntry:
    """One batch awaiting settlement; ``outcome`` resolves to an answer or an error."""

    context: AskContext
    outcome: asyncio.Future[AskUserQuestionAnswer] = field(repr=False)
    delivery: str = "wait"  # "async": no tool call waits for it (interaction/later.py)
    unhook: Callable[[], None] = field(default=lambda: None, repr=False)  # off the signal

    @property
    def request(self) -> AskUserQuestionRequest:
        return self.context.request

    @property
    def rpc_id(self) -> str:
        return self.context.rpc_id

    @property
    def session_id(self) -> str | None:
        return self.context.session_id

    def announcement(self) -> QuestionRequested:
        """The ``question/requested`` event for this batch (also what a replay sends)."""
        return QuestionRequested(
            rpc_id=self.rpc_id,
            session_id=self.session_id,
            call_id=self.request.call_id,
            questions=self.request.questions_json(),
            source=self.request.source_json(),
            declinable=self.request.declinable,
            review=self.request.review,
            continuation=self.request.continuation,
            delivery=self.delivery,
        )


def declined() -> UserInteractionError:
    """The error a declined batch settles with, whoever declined it."""
    return Outcome.DECLINED.error()


class PendingQuestions:
    """Register before announce; first valid response wins; bad responses keep it pending."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self._entries: dict[str, PendingEntry] = {}

    def register(self, request: AskUserQuestionRequest, *, rpc_id: str | None = None,
                 deadline: Deadline | None = None,
                 last_answers: dict[str, list[str]] | None = None,
                 last_answered: dict[str, dict[str, str]] | None = None) -> PendingEntry:
        """Add a batch before anyone announces it, under ``rpc_id`` or a fresh one."""
        rpc_id = rpc_id if rpc_id is not None else mint_rpc_id()
        if rpc_id in self._entries:
            raise ValueError(f"rpc_id {rpc_id} is already pending")
        context = AskContext(request, rpc_id, self.session_id, deadline,
                             last_answers=last_answers or {},
                             last_answered=last_answered or {})
        entry = PendingEntry(context, asyncio.get_running_loop().create_future())
        self._entries[rpc_id] = entry
        signal = request.signal
        if signal is not None:
            entry.unhook = signal.on_abort(lambda reason: self.settle(
                rpc_id, Outcome.ABORTED.error(f"the question was aborted ({reason})")))
        return entry

    def get(self, rpc_id: str) -> PendingEntry | None:
        return self._entries.get(rpc_id)

    def __len__(self) -> int:
        return len(self._entries)

    def replay(self) -> list[QuestionRequested]:
        """``question/requested`` for every pending batch, same ids, oldest first."""
        return [entry.announcement() for entry in self._entries.values()]

    def settle(self, rpc_id: str, result: AskUserQuestionAnswer | BaseException) -> bool:
        """Claim the entry and resolve it; False when it was no longer pending."""
        entry = self._entries.pop(rpc_id, None)
        if entry is None or entry.outcome.done():
            return False
        entry.unhook()
        if entry.request.signal is not None:  # decided: an abort from now on comes second
            entry.request.signal.seal()
        if isinstance(result, BaseException):
            entry.outcome.set_exception(result)
        else:
            entry.outcome.set_result(result)
        return True

    def discard(self, rpc_id: str) -> None:
        """Forget an entry that its owner settled by other means."""
        entry = self._entries.pop(rpc_id, None)
        if entry is not None:
            entry.unhook()

    def _claim(self, rpc_id: str, session_id: str | None) -> PendingEntry | ResponseAck:
        """The entry a frame may settle, or why not (``not-pending``, ``wrong-session``)."""
        entry = self._entries.get(rpc_id)
        if entry is None or entry.outcome.done():
            return ResponseAck(rpc_id, False, NOT_PENDING, f"no pending question {rpc_id}")
        return refusal(rpc_id, entry.session_id, session_id) or entry

    def respond(self, rpc_id: str, answers: Any, session_id: str | None = None) -> ResponseAck:
        """A controller's answer: validated, then first valid response wins."""
        entry = self._claim(rpc_id, session_id)
        if isinstance(entry, ResponseAck):
            return entry
        try:
            answer = validate_answer(entry.request, {"answers": answers})
        except UserInteractionError as error:
            return ResponseAck(rpc_id, False, BAD_RESPONSE, error.message)
        self.settle(rpc_id, answer)
        return ResponseAck(rpc_id, True)

    def cancel(self, rpc_id: str, session_id: str | None = None) -> ResponseAck:
        """The human dismissed the batch from outside: ``ASK_CANCELLED``."""
        entry = self._claim(rpc_id, session_id)
        if isinstance(entry, ResponseAck):
            return entry
        self.settle(rpc_id, Outcome.CANCELLED.error())
        return ResponseAck(rpc_id, True)

    def decline(self, rpc_id: str, session_id: str | None = None) -> ResponseAck:
        """The human declined a batch that offers it: ``ASK_DECLINED``."""
        entry = self._claim(rpc_id, session_id)
        if isinstance(entry, ResponseAck):
            return entry
        if not entry.request.declinable:
            return ResponseAck(rpc_id, False, BAD_RESPONSE,
                               f"{rpc_id} cannot be declined: answer or cancel it")
        self.settle(rpc_id, declined())
        return ResponseAck(rpc_id, True)

    def discuss(self, rpc_id: str, session_id: str | None = None) -> ResponseAck:
        """The human left the model's batch to talk about it: ``ASK_DISCUSS``."""
        entry = self._claim(rpc_id, session_id)
        if isinstance(entry, ResponseAck):
            return entry
        if entry.request.source is not None:  # an MCP server's form: the model is not asking
            return ResponseAck(rpc_id, False, BAD_RESPONSE,
                               f"{rpc_id} is a form of {entry.request.source.name}: answer, "
                               "decline or cancel it")
        self.settle(rpc_id, discuss_instead())
        return ResponseAck(rpc_id, True)

    def settle_all(self, error: BaseException) -> None:
        """Reject every pending batch (disposal, shutdown)."""
        for rpc_id in list(self._entries):
            self.settle(rpc_id, error)
