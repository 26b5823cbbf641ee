"""``UserInteraction``: the seam a tool calls to ask the human (``ctx.user_interaction``).

One provider is active at a time. ``ask`` validates the request in the documented order,
waits its turn (requests are shown one at a time, first in first out) unless the provider
is ``concurrent`` (it lists every pending batch at once: a desk relay, the web page, an
answers file), registers the batch in the pending table, announces it on the event stream,
and then settles it by whichever comes first: the provider's answer, a controller's
response through the table, the owner's abort signal, the question timeout, or disposal of
the provider.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from dsh_cli.core.errors import (
    CALLER_NOT_LIVE,
    DELEGATED_CALLER,
    DUPLICATE_PROVIDER,
    UserInteractionError,
)
from dsh_cli.core.events import EventStream, QuestionResolved
from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.tasks import close_task
from dsh_cli.interaction.agents import Agent, AgentRegistry
from dsh_cli.interaction.later import LaterQuestions
from dsh_cli.interaction.pending import PendingEntry, PendingQuestions
from dsh_cli.interaction.traits import answerer_of, is_concurrent
from dsh_cli.interaction.validation import check_questions, validate_answer
from dsh_cli.interaction.vocabulary import (
    AskContext,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    Deadline,
)

__all__ = ["UserInteraction", "UserInteractionProvider"]

class UserInteractionProvider(Protocol):
    """A UI that shows a batch and returns the human's answer (or raises a seam error).

    It is handed the ``AskContext`` of one showing (``context.request`` is the batch) and
    may return an ``AskUserQuestionAnswer`` or its JSON: the seam validates either. What
    else it offers (holding many batches at once, drawing, answering at once, naming who
    answered, knowing what a desk has seen) is a trait of ``interaction/traits.py``.
    """

    async def ask(self, context: AskContext) -> object: ...


def aborted(reason: str = "the question was aborted") -> UserInteractionError:
    return Outcome.ABORTED.error(reason)


class UserInteraction:
    """The single-active-provider registry and the ``ask`` entry point."""

    def __init__(
        self,
        *,
        events: EventStream | None = None,
        agents: AgentRegistry | None = None,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.events = events or EventStream()
        self.agents = agents or AgentRegistry()
        self.pending = PendingQuestions(session_id)
        self.later = LaterQuestions(self)  # delivery "async": batches no tool call waits for
        self.timeout = timeout
        # the labels last chosen for the same questions, per question id: a list, or (labels,
        # session id, answered at) saying where they came from (the store's ``last_answers``)
        self.recall: Callable[[AskUserQuestionRequest], dict[str, Any]] | None = None
        self._provider: UserInteractionProvider | None = None
        self._queue: deque[asyncio.Future[None]] = deque()

    @property
    def session_id(self) -> str | None:
        return self.pending.session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self.pending.session_id = value

    @property
    def provider(self) -> UserInteractionProvider | None:
        return self._provider

    def register_provider(self, provider: UserInteractionProvider) -> Callable[[], None]:
        """Make ``provider`` the active one; returns its disposer (safe to call twice)."""
        if self._provider is not None:
            raise UserInteractionError(
                "another question provider is already active", DUPLICATE_PROVIDER
            )
        self._provider = provider

        def dispose() -> None:
            if self._provider is not provider:
                return
            self._provider = None
            error = aborted("the question provider was closed")
            self.pending.settle_all(error)
            for ticket in self._queue:
                if not ticket.done():
                    ticket.set_exception(error)

        return dispose

    async def ask(
        self,
        request: AskUserQuestionRequest,
        *,
        timeout: float | None = None,
        rpc_id: str | None = None,
        delivery: str = "wait",
    ) -> AskUserQuestionAnswer:
        """Ask the human; the normalised answer, or a ``UserInteractionError``.

        ``rpc_id`` reuses a stored request id (a resumed session re-asking a batch that was
        pending); otherwise each ask mints its own. ``delivery`` is what the announcement
        says (``"async"``: no tool call waits for the batch). ``request`` is only read.
        """
        self.check_request(request)
        if is_concurrent(self._provider):  # it lists them all: nothing waits behind another
            return await self._show(request, timeout, rpc_id, delivery)
        await self._wait_turn(request)
        try:
            return await self._show(request, timeout, rpc_id, delivery)
        finally:
            self._next_turn()

    async def _show(self, request: AskUserQuestionRequest, timeout: float | None,
                    rpc_id: str | None, delivery: str) -> AskUserQuestionAnswer:
        """Register, announce and settle one batch (its turn, if it needed one, has come)."""
        provider = self._provider
        if provider is None:
            raise Outcome.NO_PROVIDER.error()
        seconds = timeout if timeout is not None else self.timeout
        deadline = None
        if seconds is not None:
            deadline = Deadline(seconds, asyncio.get_running_loop().time())
        last, where = await self._recall(request)  # before it is announced: desks show it
        entry = self.pending.register(request, rpc_id=rpc_id, deadline=deadline,
                                      last_answers=last, last_answered=where)
        entry.delivery = delivery  # so a replay (a page reloaded) says so too
        try:
            self.events.emit(entry.announcement())
        except BaseException:
            self.pending.discard(entry.rpc_id)  # never replay a batch nobody will settle
            raise
        return await self._settle(entry, provider)

    def check_request(self, request: AskUserQuestionRequest) -> None:
        """The documented checks, in order, before anything is shown (raises their codes)."""
        signal = request.signal
        if signal is not None and signal.aborted:
            raise aborted(f"the question was aborted before it was shown ({signal.reason})")
        check_questions(request)
        self._check_caller(request.agent)
        if self._provider is None:
            raise Outcome.NO_PROVIDER.error()

    async def settle_entry(self, entry: PendingEntry,
                           provider: UserInteractionProvider) -> AskUserQuestionAnswer:
        """Settle a registered, announced batch as ``ask`` does, without taking a turn."""
        return await self._settle(entry, provider)

    def _check_caller(self, agent: Agent | None) -> None:
        if agent is None:
            return
        if not self.agents.is_live(agent):
            raise UserInteractionError(f"agent {agent.name} is not live", CALLER_NOT_LIVE)
        if agent.parent is not None and self.agents.is_live(agent.parent):
            raise UserInteractionError(
                f"agent {agent.name} is owned by {agent.parent.name}; only the owner may ask",
                DELEGATED_CALLER,
            )

    async def _wait_turn(self, request: AskUserQuestionRequest) -> None:
        """Queue behind the batch on screen; an abort while queued leaves the queue unshown."""
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(ticket)
        if self._queue[0] is ticket:
            ticket.set_result(None)
        waiters: set[asyncio.Future[Any]] = {ticket}
        signal = request.signal
        abort_wait = _abort_waiter(request)
        if abort_wait is not None:
            waiters.add(abort_wait)
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            self._drop(ticket)
            raise
        finally:
            if abort_wait is not None:
                abort_wait.cancel()
        if not ticket.done():  # only the abort waiter can have woken us
            self._drop(ticket)
            reason = signal.reason if signal is not None else None
            raise aborted(f"the question was aborted while queued ({reason})")
        error = ticket.exception()
        if error is not None:
            self._drop(ticket)
            raise error

    def _drop(self, ticket: asyncio.Future[None]) -> None:
        was_head = bool(self._queue) and self._queue[0] is ticket
        with contextlib.suppress(ValueError):
            self._queue.remove(ticket)
        if was_head:
            self._wake_head()

    def _next_turn(self) -> None:
        if self._queue:
            self._queue.popleft()
        self._wake_head()

    def _wake_head(self) -> None:
        if self._queue and not self._queue[0].done():
            self._queue[0].set_result(None)

    async def _settle(
        self, entry: PendingEntry, provider: UserInteractionProvider
    ) -> AskUserQuestionAnswer:
        request = entry.request
        provider_task = asyncio.ensure_future(provider.ask(entry.context))
        waiters: set[asyncio.Future[Any]] = {provider_task, entry.outcome}
        abort_wait = _abort_waiter(request)
        if abort_wait is not None:
            waiters.add(abort_wait)
        expiry = _expiry(entry.context.deadline)
        if expiry is not None:
            waiters.add(expiry)
        answered_by = answerer_of(provider, through_table=True)
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if not entry.outcome.done():
                answered_by = answerer_of(provider)
                self.pending.settle(entry.rpc_id, self._first_outcome(request, provider_task,
                                                                      expiry))
        except BaseException:
            self.pending.settle(entry.rpc_id, aborted("the question was aborted"))
            raise
        finally:
            for waiter in (abort_wait, expiry):
                if waiter is not None:
                    waiter.cancel()
            try:
                await close_task(provider_task)  # the UI restores the screen first
            finally:
                self.pending.discard(entry.rpc_id)
                self._announce_resolution(entry, answered_by)
        return entry.outcome.result()

    async def _recall(self, request: AskUserQuestionRequest
                      ) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
        """The last answers to the same questions and where each came from, when a store
        knows them; looked up in a thread, so a large store never holds the event loop."""
        if self.recall is None:
            return {}, {}
        try:
            found = await asyncio.to_thread(self.recall, request)
        except Exception:  # a store problem costs the hint, never the question
            return {}, {}
        labels = {key: list(value[0] if isinstance(value, tuple) else value)
                  for key, value in found.items()}
        where = {key: {"session_id": str(value[1]), "answered_at": str(value[2])}
                 for key, value in found.items() if isinstance(value, tuple)}
        return labels, where

    def _first_outcome(
        self,
        request: AskUserQuestionRequest,
        provider_task: asyncio.Future[Any],
        expiry: asyncio.Future[None] | None,
    ) -> AskUserQuestionAnswer | BaseException:
        if provider_task.done():
            error = provider_task.exception()
            if isinstance(error, UserInteractionError):
                return error
            if error is not None:
                return aborted(f"the question provider failed: {error}")
            try:
                return validate_answer(request, provider_task.result())
            except UserInteractionError as invalid:
                return invalid
        if expiry is not None and expiry.done():
            return Outcome.TIMED_OUT.error()
        reason = request.signal.reason if request.signal else None
        return aborted(f"the question was aborted ({reason})")

    def _announce_resolution(self, entry: PendingEntry, answered_by: str) -> None:
        outcome = entry.outcome
        if outcome.cancelled():
            return
        error = outcome.exception()
        if error is None:
            self.events.emit(QuestionResolved(entry.rpc_id, Outcome.ANSWERED,
                                              outcome.result().to_json(), answered_by))
        else:
            code = getattr(error, "code", Outcome.ABORTED.code)
            self.events.emit(QuestionResolved(entry.rpc_id, Outcome.of_code(code), code=code))


def _abort_waiter(request: AskUserQuestionRequest) -> asyncio.Future[Any] | None:
    if request.signal is None:
        return None
    return asyncio.ensure_future(request.signal.wait())


def _expiry(deadline: Deadline | None) -> asyncio.Future[None] | None:
    """A future done when the deadline passes, unless the provider stops it first."""
    if deadline is None:
        return None
    loop = asyncio.get_running_loop()
    expired: asyncio.Future[None] = loop.create_future()

    def expire() -> None:
        if not expired.done() and not deadline.stopped:
            expired.set_result(None)

    handle = loop.call_at(deadline.expires_at, expire)
    deadline.on_stop(handle.cancel)
    expired.add_done_callback(lambda _: handle.cancel())  # no timer outlives its question
    return expired
