"""Tickets: work a client starts now and fetches later, seen only by the session that made it.

A ticket names one piece of work running as an asyncio task (an async ``ask_user_question``
batch): its id, its owner (an MCP session: ``owned/owners.py``, the tasks' rule too), when
it was made, an optional ``ttl`` (seconds from creation), the task, how to abort it, and its
``kind`` (a fetch names the kind it reads).
The store knows nothing of questions, UIs or the SDK.

- ``add`` refuses past ``TICKETS_OPEN`` open tickets in all, ``TICKETS_OPEN_PER_OWNER``
  open of one owner, or ``TICKETS_SETTLED`` kept outcomes of one owner (``TOO_MANY_PENDING``),
  so one session cannot starve the others; call ``admit`` first to refuse before the work
  is started.
- ``get``/``wait`` see only the owner's tickets: another owner's id reads ``UNKNOWN_TICKET``,
  exactly like an id never made, so an id tells nobody else anything.
- A settled outcome is kept ``TICKET_KEEP_SECONDS`` until fetched, then
  ``TICKET_FETCHED_SECONDS`` more (a client whose response was lost asks again), and never
  less: no other owner's work, and no cap, forgets it sooner (an owner with
  ``TICKETS_SETTLED`` kept is refused new work instead). A forgotten id is remembered (as
  many again) and reads ``TICKET_EXPIRED``. Expiry is swept at each use: nothing runs on a
  timer. What is kept is bounded by owners (the HTTP door's session cap) times the caps.
- ``wait`` waits for the work without owning it: a cancelled wait leaves the work running.
- ``close_owner`` (the session ended) aborts the owner's open work and forgets its tickets.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dsh_cli.core.errors import (
    NO_TICKET_OWNER,
    TICKET_EXPIRED,
    TOO_MANY_PENDING,
    UNKNOWN_TICKET,
    TicketError,
)
from dsh_cli.core.limits import (
    OWNED_CLOSE_GRACE_SECONDS,
    TICKET_FETCHED_SECONDS,
    TICKET_KEEP_SECONDS,
    TICKETS_OPEN,
    TICKETS_OPEN_PER_OWNER,
    TICKETS_SETTLED,
)
from dsh_cli.mcp_server.owned.work import OwnedRecords, OwnerCounts, end_with_grace

__all__ = ["CLOSE_GRACE_SECONDS", "Ticket", "TicketStore", "unowned"]

CLOSE_GRACE_SECONDS = OWNED_CLOSE_GRACE_SECONDS  # as the tasks': aborted work's time to end


def unowned() -> TicketError:
    """The refusal for a request whose session cannot be told (fail closed, never shared)."""
    return TicketError("this request names no MCP session (no mcp-session-id header), so "
                       "its async requests could not be kept apart from another session's; "
                       "ask with delivery \"wait\"", NO_TICKET_OWNER)


@dataclass(eq=False)
class Ticket:
    """One piece of work: open while its task runs; its outcome is the task's result."""

    id: str
    owner: str
    task: asyncio.Future[Any]
    created: float
    ttl: float | None = None  # seconds from ``created`` after which it goes, whatever its state
    abort: Callable[[], object] | None = None  # asks the work to end (the session went away)
    kind: str = ""  # what made it ("ask": an async ask_user_question), so a fetch sees its own
    settled: float | None = None
    fetched: float | None = None  # the first time its outcome was handed out

    @property
    def done(self) -> bool:
        return self.task.done()

    def outcome(self) -> Any:
        """The task's result (or its exception, raised); only once ``done``."""
        return self.task.result()

    def expires(self, keep: float, keep_fetched: float) -> float | None:
        """When it is forgotten; None while it may stay (open, without a ttl)."""
        ends = [self.created + self.ttl] if self.ttl is not None else []
        if self.settled is not None:
            ends.append(self.settled + keep)
        if self.fetched is not None:
            ends.append(self.fetched + keep_fetched)
        return min(ends) if ends else None


class TicketStore:
    """The tickets of one ``dsh mcp`` process, all sessions together."""

    def __init__(self, *, open_limit: int = TICKETS_OPEN,
                 owner_limit: int = TICKETS_OPEN_PER_OWNER, settled_limit: int = TICKETS_SETTLED,
                 keep: float = TICKET_KEEP_SECONDS, keep_fetched: float = TICKET_FETCHED_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.open_limit = open_limit
        self.owner_limit = owner_limit
        self.settled_limit = settled_limit
        self.keep = keep
        self.keep_fetched = keep_fetched
        self._clock = clock
        self._tickets: OwnedRecords[Ticket] = OwnedRecords()
        self._open = 0
        self._open_of = OwnerCounts()  # owner -> its open tickets
        self._kept_of = OwnerCounts()  # owner -> its settled, kept tickets
        self._unfetched_of = OwnerCounts()  # owner -> its kept ones never fetched
        self._settled: OrderedDict[str, None] = OrderedDict()  # settled ids, oldest first
        self._timed: dict[str, None] = {}  # open ids with a ttl (the only open ones that expire)
        self._forgotten: OrderedDict[tuple[str, str], None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tickets)

    def __contains__(self, ticket_id: object) -> bool:
        return ticket_id in self._tickets

    @property
    def open_count(self) -> int:
        return self._open

    def admit(self, owner: str | None = None) -> None:
        """Raise ``TOO_MANY_PENDING`` if one more open ticket (of ``owner``) is one too many."""
        self.sweep()
        if self._open >= self.open_limit:
            raise TicketError(
                f"{self._open:,} async requests are open already (at most "
                f"{self.open_limit:,}): each one that ends makes room", TOO_MANY_PENDING)
        mine = self._open_of[owner] if owner is not None else 0
        if mine >= self.owner_limit:
            raise TicketError(
                f"{mine:,} async requests of this session are open already (at most "
                f"{self.owner_limit:,} each): each one that ends makes room", TOO_MANY_PENDING)
        kept = self._kept_of[owner] if owner is not None else 0
        if kept >= self.settled_limit:
            raise TicketError(
                f"{kept:,} outcomes of this session's async requests are kept already (at "
                f"most {self.settled_limit:,}): an outcome goes {self.keep_fetched:,.0f} s "
                f"after it was first fetched, {self.keep:,.0f} s if never fetched",
                TOO_MANY_PENDING)

    def add(self, ticket_id: str, owner: str, task: asyncio.Future[Any], *,
            ttl: float | None = None, abort: Callable[[], object] | None = None,
            kind: str = "") -> Ticket:
        """Keep ``task`` under ``ticket_id`` for ``owner``; ``TOO_MANY_PENDING`` past a cap."""
        self.admit(owner)
        if ticket_id in self._tickets:
            raise ValueError(f"ticket {ticket_id} exists already")
        ticket = Ticket(ticket_id, owner, task, self._clock(), ttl, abort, kind)
        self._tickets.add(owner, ticket_id, ticket)
        self._open += 1
        self._open_of.up(owner)
        if ttl is not None:
            self._timed[ticket_id] = None
        task.add_done_callback(lambda _: self._settle(ticket))
        return ticket

    def get(self, ticket_id: str, owner: str, kind: str | None = None) -> Ticket:
        """``owner``'s ticket (of ``kind``, if given); ``UNKNOWN_TICKET`` (never made, or
        another's) or ``TICKET_EXPIRED``."""
        self.sweep()
        ticket = self._tickets.get(ticket_id)
        if ticket is not None and ticket.owner == owner and kind in (None, ticket.kind):
            return ticket
        if (owner, ticket_id) in self._forgotten:
            raise TicketError(
                f"the outcome of ticket {ticket_id} is no longer kept (kept "
                f"{self.keep_fetched:,.0f} s after it was first fetched, "
                f"{self.keep:,.0f} s if never fetched)", TICKET_EXPIRED)
        raise TicketError(f"no request of this session has the ticket {ticket_id}",
                          UNKNOWN_TICKET)

    async def wait(self, ticket_id: str, owner: str, seconds: float,
                   kind: str | None = None) -> Ticket:
        """``owner``'s ticket once it settled, or after ``seconds``; a settled one is marked
        fetched. Cancelling the wait leaves the work alone."""
        ticket = self.get(ticket_id, owner, kind)
        if not ticket.done and seconds > 0:
            await asyncio.wait({ticket.task}, timeout=seconds)  # never cancels the task
        if ticket.done:
            self.mark_fetched(ticket)
        return ticket

    def mark_fetched(self, ticket: Ticket) -> None:
        """Its outcome was handed out: from now on it is kept ``keep_fetched`` seconds."""
        if ticket.fetched is None and ticket.done:
            ticket.fetched = self._clock()
            if ticket.id in self._settled:
                self._unfetched_of.down(ticket.owner)

    def owned(self, owner: str) -> list[Ticket]:
        """``owner``'s tickets, oldest first."""
        self.sweep()
        return self._tickets.of(owner)

    def holds(self, owner: str) -> bool:
        """Whether ``owner`` has work open, or an outcome it has not fetched yet (counted, so
        the HTTP door may ask of every session at once)."""
        return owner in self._open_of or owner in self._unfetched_of

    def sweep(self) -> None:
        """Forget what has outlived its time: settled ones, and open ones past their ttl."""
        now = self._clock()
        for ticket_id in [*self._settled, *self._timed]:
            ticket = self._tickets.get(ticket_id)
            if ticket is None:
                continue
            ends = ticket.expires(self.keep, self.keep_fetched)
            if ends is not None and now >= ends:
                self._forget(ticket, remember=True)

    async def close_owner(self, owner: str) -> None:
        """``owner`` went away: abort its open work, wait for it to end, forget its tickets."""
        await self._close(self._tickets.of(owner))

    async def close(self) -> None:
        """The server is ending: every ticket as ``close_owner``."""
        await self._close(list(self._tickets))

    async def _close(self, tickets: list[Ticket]) -> None:
        running = []
        for ticket in tickets:
            if not ticket.done:
                if ticket.abort is not None:
                    ticket.abort()
                else:
                    ticket.task.cancel()
                running.append(ticket.task)
        await end_with_grace(running)  # aborted work settles itself, or is cancelled
        for ticket in tickets:
            self._forget(ticket, remember=False)

    def _settle(self, ticket: Ticket) -> None:
        if self._tickets.get(ticket.id) is not ticket:
            return  # forgotten before it ended (its ttl, or its owner closed)
        ticket.settled = self._clock()
        self._closed(ticket)
        self._timed.pop(ticket.id, None)
        self._settled[ticket.id] = None  # kept its time: never forgotten to make room
        self._kept_of.up(ticket.owner)
        if ticket.fetched is None:
            self._unfetched_of.up(ticket.owner)

    def _closed(self, ticket: Ticket) -> None:
        """One open ticket fewer, in all and for its owner."""
        self._open -= 1
        self._open_of.down(ticket.owner)

    def _forget(self, ticket: Ticket, *, remember: bool) -> None:
        if self._tickets.get(ticket.id) is not ticket:
            return
        self._tickets.remove(ticket.owner, ticket.id)
        self._timed.pop(ticket.id, None)
        if ticket.id in self._settled:
            del self._settled[ticket.id]
            self._kept_of.down(ticket.owner)
            if ticket.fetched is None:
                self._unfetched_of.down(ticket.owner)
        else:  # open: past its ttl, or its owner went away
            self._closed(ticket)
            if ticket.abort is not None:
                ticket.abort()
            else:
                ticket.task.cancel()
        if remember:
            self._forgotten[(ticket.owner, ticket.id)] = None
            while len(self._forgotten) > self.settled_limit:
                del self._forgotten[next(iter(self._forgotten))]

