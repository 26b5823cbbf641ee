"""Tickets: the view of work fetched later that ``get_user_answer`` reads, and its rules.

A ticket is a ``Later`` record (``owned/work.py``, the one store of work fetched later, the
MCP tasks' too) whose outcome is its work's result: an async ``ask_user_question`` batch
running as an asyncio task, of ``kind`` "ask" (a fetch names the kind it reads). Its owner
is an MCP session (``owned/owners.py``, the tasks' rule too). This view knows nothing of
questions, UIs or the SDK; its rules are:

- ``add`` refuses past ``TICKETS_OPEN`` open tickets in all, ``TICKETS_OPEN_PER_OWNER``
  open of one owner, or ``TICKETS_SETTLED`` kept outcomes of one owner (``TOO_MANY_PENDING``),
  so one session cannot starve the others; call ``admit`` first to refuse before the work
  is started.
- ``get``/``wait`` see only the owner's tickets: another owner's id reads ``UNKNOWN_TICKET``,
  exactly like an id never made, so an id tells nobody else anything.
- A settled outcome is kept ``TICKET_KEEP_SECONDS`` until fetched, then
  ``TICKET_FETCHED_SECONDS`` more (a client whose response was lost asks again), and never
  less: no other owner's work, and no cap, forgets it sooner (an owner with
  ``TICKETS_SETTLED`` kept is refused new work instead). A ticket with a ``ttl`` goes that
  many seconds after it was made, whatever its state. A forgotten id is remembered (as
  many again) and reads ``TICKET_EXPIRED``. Expiry is swept at each use: nothing runs on a
  timer. What is kept is bounded by owners (the HTTP door's session cap) times the caps.
- ``wait`` waits for the work without owning it: a cancelled wait leaves the work running.
- ``close_owner`` (the session ended: the store's, for tickets and tasks at once) aborts
  the owner's open work and forgets its tickets; ``close`` does so for every ticket.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
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
from dsh_cli.core.signal import AbortSignal
from dsh_cli.mcp_server.owned.work import Later, LaterWork

__all__ = ["CLOSE_GRACE_SECONDS", "SESSION_ENDED", "Tickets", "unowned"]

CLOSE_GRACE_SECONDS = OWNED_CLOSE_GRACE_SECONDS  # as the tasks': aborted work's time to end
SESSION_ENDED = "the agent's session ended"  # why a ticket's open work is aborted


def unowned() -> TicketError:
    """The refusal for a request whose session cannot be told (fail closed, never shared)."""
    return TicketError("this request names no MCP session (no mcp-session-id header), so "
                       "its async requests could not be kept apart from another session's; "
                       "ask with delivery \"wait\"", NO_TICKET_OWNER)


class Tickets:
    """The tickets of one ``dsh mcp`` process, all sessions together, in ``store``."""

    def __init__(self, store: LaterWork | None = None, *, open_limit: int = TICKETS_OPEN,
                 owner_limit: int = TICKETS_OPEN_PER_OWNER, settled_limit: int = TICKETS_SETTLED,
                 keep: float = TICKET_KEEP_SECONDS,
                 keep_fetched: float = TICKET_FETCHED_SECONDS) -> None:
        self.store = store if store is not None else LaterWork()
        self.open_limit = open_limit
        self.owner_limit = owner_limit
        self.settled_limit = settled_limit
        self.keep = keep
        self.keep_fetched = keep_fetched
        self._tally = self.store.tally(self)
        self._timed: dict[str, Later] = {}  # open tickets with a ttl (the only open ones that go)
        self._forgotten: OrderedDict[tuple[str, str], None] = OrderedDict()

    def __len__(self) -> int:
        return self._tally.open + len(self._tally.kept)

    def __contains__(self, ticket_id: object) -> bool:
        record = self.store.find(ticket_id)
        return record is not None and record.view is self

    @property
    def open_count(self) -> int:
        return self._tally.open

    def admit(self, owner: str | None = None) -> None:
        """Raise ``TOO_MANY_PENDING`` if one more open ticket (of ``owner``) is one too many."""
        self.sweep()
        tally = self._tally
        if tally.open >= self.open_limit:
            raise TicketError(
                f"{tally.open:,} async requests are open already (at most "
                f"{self.open_limit:,}): each one that ends makes room", TOO_MANY_PENDING)
        mine = tally.open_of[owner] if owner is not None else 0
        if mine >= self.owner_limit:
            raise TicketError(
                f"{mine:,} async requests of this session are open already (at most "
                f"{self.owner_limit:,} each): each one that ends makes room", TOO_MANY_PENDING)
        kept = tally.kept_of[owner] if owner is not None else 0
        if kept >= self.settled_limit:
            raise TicketError(
                f"{kept:,} outcomes of this session's async requests are kept already (at "
                f"most {self.settled_limit:,}): an outcome goes {self.keep_fetched:,.0f} s "
                f"after it was first fetched, {self.keep:,.0f} s if never fetched",
                TOO_MANY_PENDING)

    def add(self, ticket_id: str, owner: str, task: asyncio.Future[Any], *,
            ttl: float | None = None, signal: AbortSignal | None = None,
            kind: str = "") -> Later:
        """Keep ``task`` under ``ticket_id`` for ``owner``; ``TOO_MANY_PENDING`` past a cap.
        ``signal`` aborts its work (the owner went away); without one it is cancelled."""
        self.admit(owner)
        record = self.store.add(Later(ticket_id, owner, kind, self, task, self.store.clock(),
                                      ttl, signal))
        if ttl is not None:
            self._timed[ticket_id] = record
            task.add_done_callback(lambda _: self._timed.pop(ticket_id, None))
        return record

    def get(self, ticket_id: str, owner: str, kind: str | None = None) -> Later:
        """``owner``'s ticket (of ``kind``, if given); ``UNKNOWN_TICKET`` (never made, or
        another's) or ``TICKET_EXPIRED``."""
        self.sweep()
        ticket = self.store.get(ticket_id, owner)
        if ticket is not None and ticket.view is self and kind in (None, ticket.kind):
            return ticket
        if (owner, ticket_id) in self._forgotten:
            raise TicketError(
                f"the outcome of ticket {ticket_id} is no longer kept (kept "
                f"{self.keep_fetched:,.0f} s after it was first fetched, "
                f"{self.keep:,.0f} s if never fetched)", TICKET_EXPIRED)
        raise TicketError(f"no request of this session has the ticket {ticket_id}",
                          UNKNOWN_TICKET)

    async def wait(self, ticket_id: str, owner: str, seconds: float,
                   kind: str | None = None) -> Later:
        """``owner``'s ticket once it settled, or after ``seconds``; a settled one is marked
        fetched. Cancelling the wait leaves the work alone."""
        ticket = self.get(ticket_id, owner, kind)
        if not ticket.done and seconds > 0:
            await asyncio.wait({ticket.outcome}, timeout=seconds)  # never cancels the task
        if ticket.done:
            self.mark_fetched(ticket)
        return ticket

    def mark_fetched(self, ticket: Later) -> None:
        """Its outcome was handed out: from now on it is kept ``keep_fetched`` seconds."""
        self.store.mark_fetched(ticket)

    def owned(self, owner: str) -> list[Later]:
        """``owner``'s tickets, oldest first."""
        self.sweep()
        return self._of(owner)

    def holds(self, owner: str) -> bool:
        """Whether ``owner`` has work open, or an outcome it has not fetched yet (the store's
        count, of its tasks too)."""
        return self.store.holds(owner)

    def expires(self, ticket: Later) -> float | None:
        """When ``ticket`` is forgotten; None while it may stay (open, without a ttl)."""
        ends = [ticket.created + ticket.ttl] if ticket.ttl is not None else []
        if ticket.settled is not None:
            ends.append(ticket.settled + self.keep)
        if ticket.fetched is not None:
            ends.append(ticket.fetched + self.keep_fetched)
        return min(ends) if ends else None

    def sweep(self) -> None:
        """Forget what has outlived its time: settled ones, and open ones past their ttl."""
        now = self.store.clock()
        for ticket in [*self._tally.kept.values(), *self._timed.values()]:
            ends = self.expires(ticket)
            if ends is not None and now >= ends:
                self._expire(ticket)

    def withdraw(self, record: Later, *, stopping: bool) -> None:
        """Abort an open ticket's work: its batch ends aborted, and settles the ticket."""
        record.abort(SESSION_ENDED)

    async def close_owner(self, owner: str) -> None:
        """``owner`` went away: abort its open work, wait for it to end, forget its tickets."""
        await self.store.end(self._of(owner), stopping=False)

    async def close(self) -> None:
        """The server is ending: every ticket as ``close_owner``."""
        await self.store.end([record for record in self.store if record.view is self],
                             stopping=True)

    def _of(self, owner: str) -> list[Later]:
        return [record for record in self.store.of(owner) if record.view is self]

    def _expire(self, ticket: Later) -> None:
        if not self.store.forget(ticket):
            return
        self._timed.pop(ticket.id, None)
        if not ticket.done:  # open: past its ttl
            ticket.abort(SESSION_ENDED)
        self._forgotten[(ticket.owner, ticket.id)] = None
        while len(self._forgotten) > self.settled_limit:
            del self._forgotten[next(iter(self._forgotten))]
