"""Questions that don't block (``delivery: "async"``): tickets, and how their answers return.

``submit`` validates a batch as ``ask`` does, gives it a ticket (its ``rpc_id`` too, so a
controller answers it with the frames it already knows), registers it in the pending table
and announces it with ``delivery: "async"``, and returns at once. Who settles it:

- a provider that only waits while controllers settle the table (relay, web, answers file):
  it is asked at once, like any batch, but no tool call waits for it;
- a provider that draws on the screen (``takes_turns``: terminal, plain) never draws while
  the model works: the front door calls ``show`` when the turn has ended (or on a key);
- the question timeout, a controller's answer or cancel; first wins (the table's rule).

An answer, a cancel or a timeout *arrives*: ``take_arrived`` hands it to the agent loop,
which adds it as a user message naming the ticket before its next model call (an idle chat
starts a turn for it). An abort (the provider closed, stdin ended, the process stops) is no
outcome: the batch stays open, stored, for ``dsh chat -c`` / ``dsh run -c``.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from dsh_cli.core.errors import (
    TICKET_NOT_PENDING,
    TOO_MANY_PENDING,
    UNKNOWN_TICKET,
    UserInteractionError,
)
from dsh_cli.core.ids import mint_rpc_id
from dsh_cli.core.limits import PENDING_BATCHES as MAX_PENDING
from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.tasks import close_task
from dsh_cli.interaction.traits import is_immediate, takes_turns
from dsh_cli.interaction.validation import validate_answer
from dsh_cli.interaction.vocabulary import (
    AskContext,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    Deadline,
)

if TYPE_CHECKING:
    from dsh_cli.core.events import EventStream
    from dsh_cli.interaction.pending import PendingEntry, PendingQuestions


class QuestionService(Protocol):
    """What the async table needs of ``service.UserInteraction`` (which owns the table)."""

    timeout: float | None
    events: EventStream

    @property
    def provider(self) -> Any: ...

    @property
    def pending(self) -> PendingQuestions: ...

    def check_request(self, request: AskUserQuestionRequest) -> None: ...

    async def settle_entry(self, entry: PendingEntry, provider: Any) -> AskUserQuestionAnswer: ...

__all__ = ["ARRIVED", "MAX_PENDING", "Arrived", "LaterBatch", "LaterQuestions",
           "arrival_message"]

Input = TypeVar("Input")


class Arrived(enum.Enum):
    """What ``LaterQuestions.next_input`` gives when an outcome arrived before the input."""

    ARRIVED = "arrived"


ARRIVED = Arrived.ARRIVED

REMEMBERED = 1_000  # delivered tickets still known, so a late cancel is TICKET_NOT_PENDING

Settled = AskUserQuestionAnswer | UserInteractionError


@dataclass(eq=False)
class LaterBatch:
    """One async batch: open while ``outcome`` is None, then arrived until delivered."""

    ticket: str
    request: AskUserQuestionRequest
    outcome: Settled | None = None
    watcher: asyncio.Task[None] | None = None

    @property
    def questions(self) -> list[str]:
        return [question.question for question in self.request.questions]


def arrival_message(ticket: str, outcome: Settled) -> str:
    """The user message that brings an async batch's outcome to the model."""
    import json  # dsh ask's path imports the seam and no json before it answers

    if isinstance(outcome, AskUserQuestionAnswer):
        payload = json.dumps({"ticket": ticket, **outcome.to_json()}, ensure_ascii=False,
                             separators=(",", ":"))
        return f"The user answered your async question (ticket {ticket}): {payload}"
    error = json.dumps({"ticket": ticket, "error": outcome.to_dict()}, ensure_ascii=False,
                       separators=(",", ":"))
    return f"Your async question (ticket {ticket}) ended without an answer: {error}"


class _Waits:
    """Stands in for a provider that draws: nothing is shown until ``show`` is called."""

    async def ask(self, context: AskContext) -> object:
        await asyncio.get_running_loop().create_future()  # until the table settles it
        raise AssertionError("unreachable")


class LaterQuestions:
    """The async batches of the session ``ui`` holds, oldest first."""

    def __init__(self, ui: QuestionService, *, limit: int = MAX_PENDING) -> None:
        self._ui = ui
        self.limit = limit
        self._batches: dict[str, LaterBatch] = {}
        self._arrived: deque[str] = deque()
        self._unwatched: set[str] = set()  # open, but no provider is asking (restored)
        self._delivered: dict[str, None] = {}  # the last REMEMBERED delivered, oldest first
        self._changed: asyncio.Event | None = None

    def __len__(self) -> int:
        return len(self._batches)

    def open(self) -> list[LaterBatch]:
        """The batches still waiting for the human, oldest first."""
        return [batch for batch in self._batches.values() if batch.outcome is None]

    def listing(self, *, shown: str | None = None, limit: int = 20) -> list[str]:
        """The open batches as lines (ticket, first question, sanitised), oldest first;
        ``shown`` marks the one on screen."""
        from dsh_cli.core.sanitize import one_line

        batches = self.open()
        lines = []
        for batch in batches[:limit]:
            first = one_line(batch.questions[0], 60)
            more = f" (+{len(batch.questions) - 1} more)" if len(batch.questions) > 1 else ""
            here = " (this one)" if batch.ticket == shown else ""
            lines.append(f"  {batch.ticket}  {first}{more}{here}")
        if len(batches) > limit:
            lines.append(f"  … and {len(batches) - limit:,} more")
        return lines

    def submit(self, request: AskUserQuestionRequest) -> str:
        """Validate and announce the batch; its ticket. Raises the seam's errors."""
        self._ui.check_request(request)
        if len(self._batches) >= self.limit:
            raise UserInteractionError(
                f"{len(self._batches):,} async question batches are waiting already (at most "
                f"{self.limit:,}): wait for answers, or ask with delivery \"wait\"",
                TOO_MANY_PENDING)
        # the batch outlives its tool call: the call's abort signal is not its owner
        request = request.model_copy(update={"signal": None})
        ticket = mint_rpc_id()
        batch = LaterBatch(ticket, request)
        self._batches[ticket] = batch
        self._watch(batch)
        return ticket

    def restore(self, stored: list[dict[str, Any]]) -> None:
        """The stored batches of a resumed session: open ones wait for a provider."""
        for row in stored:
            try:
                questions = [AskUserQuestionItem.model_validate(q)
                             for q in row["request"].get("questions", [])]
            except ValueError:  # a hand-edited row: nothing can be asked from it
                continue
            if not questions:
                continue
            request = AskUserQuestionRequest(questions=questions, call_id=row.get("call_id"))
            batch = LaterBatch(row["ticket"], request, _stored_outcome(request, row["outcome"]))
            self._batches[batch.ticket] = batch
            if batch.outcome is None:
                self._unwatched.add(batch.ticket)
            else:
                self._arrived.append(batch.ticket)

    def detach(self) -> None:
        """Forget the session's batches here (``/new``, ``/resume``); the store keeps them."""
        for batch in self._batches.values():
            if batch.watcher is not None:
                batch.watcher.cancel()
        self._batches.clear()
        self._delivered.clear()
        self._arrived.clear()
        self._unwatched.clear()

    def watch(self) -> None:
        """Ask the restored batches now that a provider is there (cheap when none wait)."""
        if self._unwatched and self._ui.provider is not None:
            for ticket in list(self._unwatched):
                self._watch(self._batches[ticket])

    def asking(self) -> bool:
        """Whether some open batch is being asked, so an outcome may still arrive."""
        return any(batch.watcher is not None for batch in self.open())

    def has_arrived(self) -> bool:
        return bool(self._arrived)

    def take_arrived(self) -> list[tuple[str, str]]:
        """``(ticket, message)`` of every outcome not yet in the conversation, in order."""
        if self._unwatched:
            self.watch()
        if not self._arrived:
            return []
        taken = []
        while self._arrived:
            ticket = self._arrived.popleft()
            batch = self._batches.pop(ticket)
            assert batch.outcome is not None
            self._delivered[ticket] = None
            if len(self._delivered) > REMEMBERED:
                del self._delivered[next(iter(self._delivered))]
            taken.append((ticket, arrival_message(ticket, batch.outcome)))
        return taken

    async def wait(self) -> None:
        """Until an outcome arrives, or nothing more can (no batch is being asked)."""
        self.watch()
        while not self._arrived and self.asking():
            event = self._event()
            event.clear()
            await event.wait()

    async def collect(self) -> None:
        """Let the open batches of a provider that answers at once (an answers file: its
        class says ``immediate = True``) settle, so their outcomes reach the next model call
        instead of the one after it."""
        if not is_immediate(self._ui.provider):
            return
        watchers = [batch.watcher for batch in self.open() if batch.watcher is not None]
        for watcher in watchers:  # shielded: a turn cancelled here leaves the batch asked
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(watcher)

    def drawn_here(self) -> bool:
        """Whether the active provider draws on the screen, so ``show`` must be called."""
        return takes_turns(self._ui.provider)

    async def show(self, ticket: str | None = None) -> bool:
        """Draw one open batch (the oldest, or ``ticket``) on the provider that draws.

        True when the human answered or cancelled it; False when they left it pending (the
        discuss key: back to the prompt) or the provider closed. ``UNKNOWN_TICKET`` or
        ``TICKET_NOT_PENDING`` when there is no such open batch, and ``TICKET_NOT_PENDING``
        when a controller or the timeout settled it first.
        """
        self.watch()
        batch = self._open_batch(ticket)
        entry = self._ui.pending.get(batch.ticket)
        provider = self._ui.provider
        if entry is None or provider is None:
            return False
        result: Settled
        asking = asyncio.ensure_future(provider.ask(entry.context))
        waiters: set[asyncio.Future[Any]] = {asking, entry.outcome}
        try:  # a controller, the timeout or a disposal may settle it while it is drawn
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not asking.done():
                await close_task(asking)  # the UI restores the screen first
        if asking.cancelled():
            raise _not_pending(batch.ticket)
        try:
            raw = asking.result()
        except UserInteractionError as error:
            if error.code in (Outcome.DISCUSSED.code, Outcome.ABORTED.code):
                return False
            result = error
        else:
            try:
                result = validate_answer(entry.request, raw)
            except UserInteractionError as invalid:
                result = invalid
        if not self._ui.pending.settle(batch.ticket, result):
            raise _not_pending(batch.ticket)
        await self._recorded(batch)
        return True

    async def show_open(self) -> bool:
        """Draw the open batches in turn, oldest first, until the human leaves one pending;
        whether any was settled."""
        settled = False
        for batch in self.open():
            try:
                if not await self.show(batch.ticket):
                    break
            except UserInteractionError:  # settled meanwhile (a timeout): on to the next
                continue
            settled = True
        return settled

    async def cancel(self, ticket: str) -> None:
        """The human dismissed an open batch: ``ASK_CANCELLED`` arrives for it.

        ``UNKNOWN_TICKET``, or ``TICKET_NOT_PENDING`` when it had been settled already (an
        answer that came first wins)."""
        batch = self._open_batch(ticket)
        error = Outcome.CANCELLED.error()
        if batch.ticket in self._unwatched:  # nobody is asking it: settle it here
            self._unwatched.discard(batch.ticket)
            self._arrive(batch, error)
            return
        if not self._ui.pending.settle(batch.ticket, error):
            raise _not_pending(batch.ticket)
        await self._recorded(batch)

    async def _recorded(self, batch: LaterBatch) -> None:
        """Until the watcher has recorded the outcome it was just given as arrived."""
        if batch.watcher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(batch.watcher)

    def _open_batch(self, ticket: str | None) -> LaterBatch:
        if ticket is None:
            open_ = self.open()
            if not open_:
                raise UserInteractionError("no async question is pending", UNKNOWN_TICKET)
            return open_[0]
        batch = self._batches.get(ticket)
        if batch is None and ticket in self._delivered:
            raise _not_pending(ticket)
        if batch is None:
            raise UserInteractionError(f"no async question has the ticket {ticket}",
                                       UNKNOWN_TICKET)
        if batch.outcome is not None:
            raise _not_pending(ticket)
        return batch

    def _watch(self, batch: LaterBatch) -> None:
        ui = self._ui
        provider = ui.provider
        if provider is None:
            self._unwatched.add(batch.ticket)
            return
        self._unwatched.discard(batch.ticket)
        deadline = None
        if ui.timeout is not None:
            deadline = Deadline(ui.timeout, asyncio.get_running_loop().time())
        entry = ui.pending.register(batch.request, rpc_id=batch.ticket, deadline=deadline)
        entry.delivery = "async"  # so a replay (a page reloaded) says so too
        try:
            ui.events.emit(entry.announcement())
        except BaseException:
            ui.pending.discard(batch.ticket)
            raise
        asker = _Waits() if takes_turns(provider) else provider
        batch.watcher = asyncio.ensure_future(self._settle(batch, entry, asker))

    async def _settle(self, batch: LaterBatch, entry: Any, asker: Any) -> None:
        try:
            result: Settled = await self._ui.settle_entry(entry, asker)
        except UserInteractionError as error:
            if error.code == Outcome.ABORTED.code:  # no outcome: open, stored, re-asked on resume
                batch.watcher = None
                self._unwatched.add(batch.ticket)
                self._notify()
                return
            result = error
        except asyncio.CancelledError:
            batch.watcher = None
            raise
        batch.watcher = None
        self._arrive(batch, result)

    async def next_input(self, read: Callable[[], Awaitable[Input]], *,
                         interrupt: Callable[[], None] | None = None) -> Input | Arrived:
        """The next input ``read`` gives, or ``ARRIVED`` when an async batch's outcome arrives
        first (the caller's next turn takes it up; an input that comes with it carries it).

        ``read`` is started once. On an arrival it is cancelled, so it must lose nothing
        then (a queue's ``get``); with ``interrupt`` it is told to end instead and what it
        gives is returned (a prompt that keeps what was typed). Restored batches are asked
        only once ``watch`` was called.
        """
        if self.has_arrived():
            return ARRIVED
        reading = asyncio.ensure_future(read())
        try:
            while True:
                arrival = asyncio.ensure_future(self.wait()) if self.asking() else None
                try:
                    await asyncio.wait({reading} if arrival is None else {reading, arrival},
                                       return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if arrival is not None:
                        await close_task(arrival)
                if reading.done():
                    return reading.result()
                if self.has_arrived():
                    if interrupt is None:
                        return ARRIVED
                    interrupt()
                    return await reading
        finally:
            await close_task(reading)

    def _arrive(self, batch: LaterBatch, outcome: Settled) -> None:
        if self._batches.get(batch.ticket) is not batch:
            return  # detached meanwhile
        batch.outcome = outcome
        self._arrived.append(batch.ticket)
        self._notify()

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()


def _not_pending(ticket: str) -> UserInteractionError:
    return UserInteractionError(
        f"the async question {ticket} is no longer pending (answered, cancelled or timed out "
        "already)", TICKET_NOT_PENDING)


def _stored_outcome(request: AskUserQuestionRequest, stored: Any) -> Settled | None:
    """A stored ``question/resolved`` as the outcome it was; None while open."""
    if not isinstance(stored, dict):
        return None
    outcome = Outcome.of_event(stored.get("outcome"))
    if outcome is Outcome.ANSWERED:
        try:
            return validate_answer(request, stored.get("answer"))
        except UserInteractionError as error:
            return error
    if outcome is None or not outcome.closes_async:  # never stored so: as a dismissal
        outcome = Outcome.CANCELLED
    return outcome.error()
