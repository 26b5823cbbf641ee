"""The hub's store: pending entries, tokens, claims and the audit, on SQLite or PostgreSQL.

Every call is one transaction that writes its audit row and its wake-up (``Change``) with
the change itself, so the audit and the listeners never see a step that did not happen.
Who won an entry is decided in one place, ``_settle``: a conditional update from
``pending`` that only one transaction can make; every other gets ``NotPending``.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
import os
import socket
import uuid
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from dsh_cli.core.errors import INVALID_ARGS, TOO_MANY_PENDING
from dsh_cli.core.limits import MCP_MESSAGE_BYTES
from dsh_cli.core.text import scrub_surrogates, scrub_surrogates_in
from dsh_cli.hub import tokens
from dsh_cli.hub.engine import Engine, Listener, Tx
from dsh_cli.hub.location import engine_for
from dsh_cli.hub.migrations import migrate
from dsh_cli.hub.records import (
    BATCH_TOO_LARGE,
    KEY_REUSED,
    TOKEN_EXISTS,
    AgentCaps,
    Answered,
    AuditAction,
    AuditRow,
    Change,
    Claimed,
    Entry,
    EntryKind,
    EntryState,
    HistoryItem,
    HistoryPage,
    HubStoreError,
    IssuedToken,
    KeptAsk,
    NotPending,
    Released,
    Renewed,
    TakenBy,
    Token,
    TokenKind,
)

__all__ = ["HubStore", "default_replica"]

# the inbox and the audit are read a page at a time
PAGE = 1000
# what one page of history may load of its entries' batches and answers (bytes of JSON)
HISTORY_BYTES = 32 * 1024 * 1024
# an agent's name, machine or working directory is kept to this many characters (a path's
# longest on Linux is 4,096 bytes)
LABEL_CHARACTERS = 4096
# a hub process's heartbeat row is forgotten once it is this old and nothing waits on it
# (each process start with the default name HOST:PID leaves one row behind)
REPLICA_FORGET_SECONDS = 24 * 60 * 60

_ENTRY = ("id, kind, batch, token, agent, machine, cwd, state, answer, answered_by, "
          "claimed_by, claim_expires, created_at, deadline, resolved_at, team")


# the audit's word for each way an entry leaves pending
_SETTLED_BY: dict[EntryState, AuditAction] = {
    "answered": "answer", "cancelled": "cancel", "timeout": "timeout"}


def default_replica() -> str:
    """This hub process's name in the audit: its host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _json(value: dict[str, Any], what: str) -> str:
    """``value`` as compact JSON; refused, before it is stored, if not an object or too big."""
    if not isinstance(value, dict):
        raise HubStoreError(f"the {what} must be a JSON object", INVALID_ARGS)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        # a lone surrogate (JSON may escape one: "\ud800") is no UTF-8 either engine takes:
        # U+FFFD instead, dsh's one rule where text enters it (core/text.py)
        text = json.dumps(scrub_surrogates_in(value), ensure_ascii=False, separators=(",", ":"))
        size = len(text.encode("utf-8"))
    if size > MCP_MESSAGE_BYTES:
        raise HubStoreError(f"the {what} is over {MCP_MESSAGE_BYTES} bytes of JSON",
                            BATCH_TOO_LARGE)
    return text


def _seconds(value: float, what: str) -> float:
    """A timeout or lease as kept: refused unless a finite number of seconds above zero
    (NaN is NULL to SQLite and above every number to PostgreSQL: no end either way)."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise HubStoreError(f"the {what} must be a number of seconds above 0, not {value!r}",
                            INVALID_ARGS)
    return float(value)


def _label(text: str) -> str:
    """An agent's self-given name, machine or directory as kept: at most ``LABEL_CHARACTERS``,
    a lone surrogate (a path's byte that is no UTF-8, as Python escapes it) as U+FFFD."""
    return scrub_surrogates(text[:LABEL_CHARACTERS])


def _entry(row: tuple[Any, ...]) -> Entry:
    (entry_id, kind, batch, token, agent, machine, cwd, state, answer, answered_by,
     claimed_by, claim_expires, created_at, deadline, resolved_at, team) = row
    return Entry(entry_id, kind, json.loads(batch), token, agent, machine, cwd, state,
                 json.loads(answer) if answer is not None else None, answered_by, claimed_by,
                 claim_expires, created_at, deadline, resolved_at, team)


class HubStore:
    """The hub's state behind one interface, whichever engine holds it."""

    def __init__(self, engine: Engine, *, replica: str | None = None,
                 clock: Callable[[], float] | None = None, caps: AgentCaps | None = None) -> None:
        self.engine = engine
        self.replica = replica or default_replica()
        self.caps = caps or AgentCaps()
        # None: the store's own clock (PostgreSQL's, one for every hub process however
        # their hosts' clocks drift); a test gives one it moves
        self._clock = clock

    @classmethod
    def open(cls, location: str | Path | None = None, *, replica: str | None = None,
             clock: Callable[[], float] | None = None, caps: AgentCaps | None = None) -> HubStore:
        """Open (creating and migrating as needed) the store at ``location``."""
        engine = engine_for(location)
        try:
            migrate(engine)
        except BaseException:
            engine.close()
            raise
        return cls(engine, replica=replica, clock=clock, caps=caps)

    @property
    def where(self) -> str:
        return self.engine.where

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> HubStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def listen(self) -> Listener:
        """A listener for the changes committed from now on (by any hub process on PostgreSQL)."""
        return self.engine.listen()

    # -- tokens --------------------------------------------------------------------------

    def add_token(self, name: str, kind: TokenKind, team: str | None = None) -> IssuedToken:
        """A new token for ``name``; its secret is in the result only, the store keeps a digest."""
        tokens.check_name(name)
        if team is not None:
            tokens.check_name(team, "team name")
        secret = tokens.mint()
        with self.engine.transaction(write=True) as tx:
            token = Token(name, kind, team, self._now(tx))
            # the insert itself decides (a read first would let two at once both pass it)
            if tx.run("INSERT INTO hub_tokens (name, kind, team, digest, created_at) "
                      "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                      (name, kind, team, tokens.digest(secret), token.created_at)) == 0:
                raise HubStoreError(f"{name} already has a token; remove it first "
                                    f"(`dsh hub token rm {name}`)", TOKEN_EXISTS)
        return IssuedToken(token, secret)

    def authenticate(self, secret: str) -> Token | None:
        """The holder of ``secret``, or None when no token has its digest."""
        with self.engine.transaction() as tx:
            rows = tx.rows("SELECT name, kind, team, created_at FROM hub_tokens "
                           "WHERE digest = ?", (tokens.digest(secret),))
        return Token(*rows[0]) if rows else None

    def token(self, name: str) -> Token | None:
        """``name``'s token as kept (kind, team, when it was made), or None if it has none."""
        with self.engine.transaction() as tx:
            rows = tx.rows("SELECT name, kind, team, created_at FROM hub_tokens "
                           "WHERE name = ?", (name,))
        return Token(*rows[0]) if rows else None

    def tokens(self) -> list[Token]:
        with self.engine.transaction() as tx:
            rows = tx.rows("SELECT name, kind, team, created_at FROM hub_tokens ORDER BY name")
        return [Token(*row) for row in rows]

    def remove_token(self, name: str) -> bool:
        """Forget ``name``'s token (it stops working at once); False if it had none."""
        with self.engine.transaction(write=True) as tx:
            return tx.run("DELETE FROM hub_tokens WHERE name = ?", (name,)) == 1

    # -- entries -------------------------------------------------------------------------

    def ask(self, *, token: str, batch: dict[str, Any], agent: str, machine: str, cwd: str,
            kind: EntryKind = "question", timeout: float | None = None,
            key: str | None = None, team: str | None = None,
            waited: bool = False) -> Entry:
        """Keep a new pending entry for ``token``'s agent; ``timeout`` seconds, else no end;
        for ``team``'s humans (its route's, ``routes.py``), or every human's when None.
        ``waited``: a call of this hub process waits on it, so it is withdrawn if this
        process's heartbeat stops (``withdraw_orphans``); otherwise it is fetched later, by
        its key, from any process.

        With ``key`` (the agent's own id for this ask), asking again with the same key is
        the same entry, as it now stands (pending or settled), with no second audit row;
        the same key with another batch is ``KEY_REUSED``.
        """
        text = _json(batch, "question batch" if kind == "question" else "permission request")
        size = len(text.encode("utf-8"))
        if key is not None:
            tokens.check_name(key, "ask key")
        if team is not None:
            tokens.check_name(team, "team name")
        agent, machine, cwd = _label(agent), _label(machine), _label(cwd)
        seconds = _seconds(timeout, "timeout") if timeout is not None else None
        entry_id = uuid.uuid4().hex
        with self.engine.transaction(write=True) as tx:
            now = self._now(tx)
            deadline = now + seconds if seconds is not None else None
            if waited:  # never a waiter without a heartbeat row to go stale
                tx.run("INSERT INTO hub_replicas (name, seen_at) VALUES (?, ?) "
                       "ON CONFLICT (name) DO NOTHING", (self.replica, now))
            # a repeat loses to the first at the unique (token, ask_key) index, atomically
            if tx.run(f"INSERT INTO hub_entries ({_ENTRY}, ask_key, size, waiter) VALUES (?, "
                      "?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, NULL, NULL, ?, ?, NULL, ?, ?, ?, "
                      "?) ON CONFLICT (token, ask_key) DO NOTHING",
                      (entry_id, kind, text, token, agent, machine, cwd, now, deadline,
                       team, key, size, self.replica if waited else None)) == 0:
                rows = tx.rows(f"SELECT {_ENTRY} FROM hub_entries WHERE token = ? AND "
                               "ask_key = ?", (token, key))
                earlier = _entry(rows[0])
                if (earlier.kind, earlier.batch) != (kind, json.loads(text)):
                    raise HubStoreError(f"ask key {key} was used for another batch of "
                                        f"{token}'s; a new batch needs a new key", KEY_REUSED)
                return earlier
            self._take_room(tx, token, size)
            self._record(tx, entry_id, "ask", token, now)
        return Entry(entry_id, kind, json.loads(text), token, agent, machine, cwd, "pending",
                     None, None, None, None, now, deadline, None, team)

    def _take_room(self, tx: Tx, token: str, size: int) -> None:
        """Count a new entry against its agent's caps, or refuse it (TOO_MANY_PENDING).

        The agent's counter row is locked by the update, so concurrent asks of one agent
        (in any hub process) are counted one after another and never pass the cap together.
        """
        tx.run("INSERT INTO hub_load (token, entries, bytes) VALUES (?, 0, 0) "
               "ON CONFLICT (token) DO NOTHING", (token,))
        caps = self.caps
        if tx.run("UPDATE hub_load SET entries = entries + 1, bytes = bytes + ? WHERE token = ? "
                  "AND entries < ? AND bytes + ? <= ?",
                  (size, token, caps.entries, size, caps.bytes)) == 1:
            return
        entries, held = tx.rows("SELECT entries, bytes FROM hub_load WHERE token = ?",
                                (token,))[0]
        raise HubStoreError(
            f"{token} has {entries} entries pending ({held / 2**20:.1f} MiB) already, at most "
            f"{caps.entries} ({caps.bytes / 2**20:.1f} MiB), so this one of "
            f"{size / 2**20:.1f} MiB was not kept: wait for answers", TOO_MANY_PENDING)

    def get(self, entry_id: str) -> Entry | None:
        with self.engine.transaction() as tx:
            return self._get(tx, entry_id)

    def by_key(self, token: str, key: str) -> Entry | None:
        """``token``'s entry asked with ``key`` (an async ask's ticket), over the unique index."""
        with self.engine.transaction() as tx:
            rows = tx.rows(f"SELECT {_ENTRY} FROM hub_entries WHERE token = ? AND ask_key = ?",
                           (token, key))
        return _entry(rows[0]) if rows else None

    def kept_asks(self, token: str, after: str = "", limit: int = PAGE) -> list[KeptAsk]:
        """``token``'s async questions (keyed, no waiter) with keys after ``after``, in key
        order, at most ``limit``: one range of the unique ``(token, ask_key)`` index, so
        other agents' entries cost nothing, and no batch or answer is read."""
        with self.engine.transaction() as tx:
            rows = tx.rows("SELECT id, ask_key, state, created_at, resolved_at FROM hub_entries "
                           "WHERE token = ? AND ask_key > ? AND kind = 'question' AND "
                           "waiter IS NULL ORDER BY ask_key LIMIT ?", (token, after, limit))
        return [KeptAsk(*row) for row in rows]

    # -- hub processes -------------------------------------------------------------------

    def beat(self) -> None:
        """This hub process is alive: its heartbeat row, on the store's clock."""
        with self.engine.transaction(write=True) as tx:
            now = self._now(tx)
            tx.run("INSERT INTO hub_replicas (name, seen_at) VALUES (?, ?) "
                   "ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at",
                   (self.replica, now))

    def withdraw_orphans(self, bound: float, limit: int = PAGE) -> list[str]:
        """Withdraw (``cancel`` by ``hub``) the pending entries waited on by hub processes
        whose heartbeat is older than ``bound`` seconds: their calls died with them (kill -9),
        so no answer may be taken for nobody. Their ids, at most ``limit``.

        Read over the heartbeats (one row per hub process) and the ``(waiter, state)``
        index: the cost is the orphans', however many entries live processes wait on.
        A stale heartbeat with nothing waiting on it is forgotten after a day.
        """
        with self.engine.transaction() as tx:
            now = self._now(tx)
            stale = [name for (name,) in tx.rows(
                "SELECT name FROM hub_replicas WHERE seen_at < ? AND name <> ?",
                (now - bound, self.replica))]
            rows = [row for name in stale for row in tx.rows(
                "SELECT id FROM hub_entries WHERE waiter = ? AND state = 'pending' LIMIT ?",
                (name, limit))][:limit]
        withdrawn = []
        for (entry_id,) in rows:  # a transaction each, as ``expire`` (its lock order)
            with self.engine.transaction(write=True) as tx:
                if not isinstance(self._settle(tx, entry_id, "cancelled", "hub"), NotPending):
                    withdrawn.append(entry_id)
        if stale and not rows:
            with self.engine.transaction(write=True) as tx:
                tx.run("DELETE FROM hub_replicas WHERE seen_at < ? AND name <> ? AND NOT EXISTS "
                       "(SELECT 1 FROM hub_entries e WHERE e.waiter = hub_replicas.name "
                       "AND e.state = 'pending')",
                       (self._now(tx) - REPLICA_FORGET_SECONDS, self.replica))
        return withdrawn

    def pending(self, limit: int = PAGE, *,
                teams: Collection[str] | None = None) -> list[Entry]:
        """The pending entries, oldest first, at most ``limit``: all of them, or (``teams``
        given) only those teams' and the unteamed ones, what a desk of theirs may see.

        Each team (and "no team") is one range of the ``(state, team, created_at, id)``
        index, read at most ``limit`` deep and merged here, so a desk's read costs the
        same however many entries other teams have pending or the store keeps settled.
        """
        with self.engine.transaction() as tx:
            if teams is None:
                rows = tx.rows(f"SELECT {_ENTRY} FROM hub_entries WHERE state = 'pending' "
                               "ORDER BY created_at, id LIMIT ?", (limit,))
                return [_entry(row) for row in rows]
            ranges = [tx.rows(f"SELECT {_ENTRY} FROM hub_entries WHERE state = 'pending' "
                              "AND team IS NULL ORDER BY created_at, id LIMIT ?", (limit,))]
            ranges += [tx.rows(f"SELECT {_ENTRY} FROM hub_entries WHERE state = 'pending' "
                               "AND team = ? ORDER BY created_at, id LIMIT ?", (team, limit))
                       for team in sorted(set(teams))]
        oldest = heapq.merge(*ranges, key=lambda row: (row[12], row[0]))
        return [_entry(row) for row in itertools.islice(oldest, limit)]

    def answer(self, entry_id: str, answer: dict[str, Any], by: str) -> Answered | NotPending:
        """Settle ``entry_id`` with ``answer`` from ``by``, if no one settled it first."""
        text = _json(answer, "answer")
        with self.engine.transaction(write=True) as tx:
            result = self._settle(tx, entry_id, "answered", by, answer=text)
            if isinstance(result, NotPending):
                return result
            entry = self._get(tx, entry_id)
        assert entry is not None  # settled in this transaction
        return Answered(entry)

    def cancel(self, entry_id: str, by: str) -> Entry | NotPending:
        """The agent withdrew the entry (or its call ended): no answer is taken after this."""
        with self.engine.transaction(write=True) as tx:
            result = self._settle(tx, entry_id, "cancelled", by)
            if isinstance(result, NotPending):
                return result
            entry = self._get(tx, entry_id)
        assert entry is not None
        return entry

    def expire(self, limit: int = PAGE) -> list[str]:
        """Time out pending entries whose deadline has passed; their ids (at most ``limit``)."""
        with self.engine.transaction() as tx:
            rows = tx.rows("SELECT id FROM hub_entries WHERE state = 'pending' "
                           "AND deadline <= ? ORDER BY deadline LIMIT ?", (self._now(tx), limit))
        expired = []
        for (entry_id,) in rows:
            # a transaction each, locking as an answer does (its entry, then its agent's
            # count): one holding an agent's count while waiting for another of its
            # entries would deadlock with an answer to that entry (PostgreSQL)
            with self.engine.transaction(write=True) as tx:
                if not isinstance(self._settle(tx, entry_id, "timeout", "hub"), NotPending):
                    expired.append(entry_id)
        return expired

    def _settle(self, tx: Tx, entry_id: str, state: EntryState, by: str,
                answer: str | None = None) -> NotPending | None:
        """The one place an entry leaves ``pending``: whoever's update changes the row won.

        Under concurrency the database serialises the updates of one row (SQLite's write
        lock, PostgreSQL's row lock with the condition read again after the wait), so
        exactly one sees ``state = 'pending'``. An entry past its deadline takes no answer:
        it is timed out here instead, and the answer gets ``NotPending``.
        """
        now = self._now(tx)
        live = "" if state == "timeout" else " AND (deadline IS NULL OR deadline > ?)"
        params: tuple[Any, ...] = (state, answer, by if state == "answered" else None, now,
                                   entry_id) + (() if state == "timeout" else (now,))
        changed = tx.run(
            "UPDATE hub_entries SET state = ?, answer = ?, answered_by = ?, resolved_at = ?, "
            "claimed_by = NULL, claim_expires = NULL "
            f"WHERE id = ? AND state = 'pending'{live}", params)
        if changed == 1:
            tx.run("UPDATE hub_load SET entries = entries - 1, "
                   "bytes = bytes - (SELECT size FROM hub_entries WHERE id = ?) "
                   "WHERE token = (SELECT token FROM hub_entries WHERE id = ?)",
                   (entry_id, entry_id))
            self._record(tx, entry_id, _SETTLED_BY[state], by, now)
            return None
        current = self._get(tx, entry_id)
        if current is not None and current.state == "pending" and state != "timeout":
            self._settle(tx, entry_id, "timeout", "hub")  # its deadline passed unswept
            return NotPending(entry_id, "timeout")
        return NotPending(entry_id, current.state if current else None)

    # -- claims --------------------------------------------------------------------------

    def claim(self, entry_id: str, human: str,
              lease: float) -> Claimed | Renewed | TakenBy | NotPending:
        """Take (or renew) ``human``'s lease on a pending entry for ``lease`` seconds.

        A claim only tells the others who is answering; it does not stop their answers,
        which the conditional update in ``_settle`` still decides.
        """
        seconds = _seconds(lease, "lease")
        with self.engine.transaction(write=True) as tx:
            now = self._now(tx)
            expires = now + seconds
            # the row is locked first (a write that changes nothing), so a release or claim
            # by another process cannot come between the updates below and the read of
            # who holds it (PostgreSQL reads each statement afresh: READ COMMITTED)
            tx.run("UPDATE hub_entries SET claimed_by = claimed_by WHERE id = ?", (entry_id,))
            if tx.run("UPDATE hub_entries SET claim_expires = ? WHERE id = ? AND "
                      "state = 'pending' AND claimed_by = ? AND claim_expires > ?",
                      (expires, entry_id, human, now)) == 1:
                return Renewed(entry_id, human, expires)
            if tx.run("UPDATE hub_entries SET claimed_by = ?, claim_expires = ? WHERE id = ? "
                      "AND state = 'pending' AND (claimed_by IS NULL OR claim_expires <= ?)",
                      (human, expires, entry_id, now)) == 1:
                self._record(tx, entry_id, "claim", human, now)
                return Claimed(entry_id, human, expires)
            current = self._get(tx, entry_id)
        if current is None or current.state != "pending":
            return NotPending(entry_id, current.state if current else None)
        holder = current.taken_by(now)
        assert holder is not None and current.claim_expires is not None
        return TakenBy(entry_id, holder, current.claim_expires)

    def release(self, entry_id: str, human: str) -> Released | TakenBy | NotPending:
        """Let go of ``human``'s lease (the desk closed the entry, or went)."""
        with self.engine.transaction(write=True) as tx:
            now = self._now(tx)
            if tx.run("UPDATE hub_entries SET claimed_by = NULL, claim_expires = NULL "
                      "WHERE id = ? AND state = 'pending' AND claimed_by = ?",
                      (entry_id, human)) == 1:
                self._record(tx, entry_id, "release", human, now)
                return Released(entry_id, human)
            current = self._get(tx, entry_id)
        if current is None or current.state != "pending":
            return NotPending(entry_id, current.state if current else None)
        holder = current.taken_by(now)
        if holder is None or current.claim_expires is None:
            return Released(entry_id, human)
        return TakenBy(entry_id, holder, current.claim_expires)

    # -- the audit -----------------------------------------------------------------------

    def audit(self, entry_id: str | None = None, *, after: int = 0,
              limit: int = PAGE) -> list[AuditRow]:
        """Audit rows in the order they happened, of one entry or all, from after ``after``."""
        where = "WHERE id > ?" + (" AND entry_id = ?" if entry_id is not None else "")
        params: tuple[Any, ...] = (after,) + ((entry_id,) if entry_id is not None else ())
        with self.engine.transaction() as tx:
            rows = tx.rows(f"SELECT id, entry_id, action, actor, replica, at FROM hub_audit "
                           f"{where} ORDER BY id LIMIT ?", (*params, limit))
        return [AuditRow(*row) for row in rows]

    def history(self, *, teams: Collection[str] | None = None, after: int = 0,
                limit: int = PAGE, since: float | None = None, agent: str | None = None,
                human: str | None = None, state: EntryState | None = None,
                budget: int = HISTORY_BYTES) -> HistoryPage:
        """Audit rows after ``after`` in the order they happened, each with its entry: of
        entries ``teams`` (and no team) may see, or all when None; ``since``: written at
        or after it; ``agent``: of entries its token name or own name is; ``human``: steps
        it took; ``state``: of entries now in it.

        With ``teams``, each team (and "no team") is one range of the audit's ``(team, id)``
        index, merged here: other teams' steps cost the read nothing. A page holds at most
        ``limit`` rows, and no more than fit ``budget`` bytes of their entries' batches and
        answers (at least one row): the sizes are read first, so a page of large batches is
        cut before any is loaded. Call again with the last id.
        """
        where: list[str] = ["a.id > ?"]
        params: list[Any] = [after]
        if since is not None:
            where.append("a.at >= ?")
            params.append(since)
        if agent is not None:
            where.append("(e.token = ? OR e.agent = ?)")
            params += [agent, agent]
        if human is not None:
            where.append("a.actor = ?")
            params.append(human)
        if state is not None:
            where.append("e.state = ?")
            params.append(state)
        ranges: list[tuple[str, tuple[Any, ...]]] = [("", ())] if teams is None else (
            [(" AND a.team IS NULL", ())]
            + [(" AND a.team = ?", (team,)) for team in sorted(set(teams))])
        joined = f"FROM hub_audit a JOIN hub_entries e ON e.id = a.entry_id WHERE " \
                 f"{' AND '.join(where)}"
        columns = ", ".join(f"e.{column.strip()}" for column in _ENTRY.split(","))

        def read(tx: Tx, select: str, extra: str, more: tuple[Any, ...],
                 count: int) -> list[tuple[Any, ...]]:
            found = [tx.rows(f"SELECT {select} {joined}{team}{extra} ORDER BY a.id LIMIT ?",
                             (*params, *named, *more, count)) for team, named in ranges]
            return list(itertools.islice(heapq.merge(*found, key=lambda row: row[0]), count))

        with self.engine.transaction() as tx:
            # an answer's characters, at most 4 bytes each in UTF-8: its size, bounded above
            sizes = read(tx, "a.id, e.size + 4 * coalesce(length(e.answer), 0)", "", (),
                         limit + 1)
            taken, total = 0, 0
            for _, size in sizes[:limit]:
                if taken and total + size > budget:
                    break
                taken, total = taken + 1, total + size
            if not taken:
                return HistoryPage((), more=False)
            rows = read(tx, f"a.id, a.entry_id, a.action, a.actor, a.replica, a.at, {columns}",
                        " AND a.id <= ?", (sizes[taken - 1][0],), taken)
        return HistoryPage(tuple(HistoryItem(AuditRow(*row[:6]), _entry(row[6:]))
                                 for row in rows), more=len(sizes) > taken)

    def prune(self, older_than: float, limit: int = PAGE) -> tuple[int, int]:
        """Forget what retention lets go: audit rows of settled entries written, then
        settled entries with no audit left resolved, more than ``older_than`` seconds ago;
        at most ``limit`` of each per call (a short transaction: call again while either
        count is ``limit``). A pending entry and its audit are kept however old.

        The number of entries and of audit rows forgotten.
        """
        with self.engine.transaction(write=True) as tx:
            cutoff = self._now(tx) - older_than
            audit = tx.run(
                "DELETE FROM hub_audit WHERE id IN (SELECT a.id FROM hub_audit a "
                "JOIN hub_entries e ON e.id = a.entry_id WHERE a.at < ? "
                "AND e.state <> 'pending' ORDER BY a.id LIMIT ?)", (cutoff, limit))
            # only a settled entry has resolved_at; one outlives its last audit row
            entries = tx.run(
                "DELETE FROM hub_entries WHERE id IN (SELECT e.id FROM hub_entries e "
                "WHERE e.resolved_at < ? AND NOT EXISTS (SELECT 1 FROM hub_audit a "
                "WHERE a.entry_id = e.id) ORDER BY e.resolved_at LIMIT ?)", (cutoff, limit))
        return entries, audit

    def _record(self, tx: Tx, entry_id: str, action: AuditAction, actor: str,
                now: float) -> None:
        # the row keeps its entry's team (read by primary key), so /history reads a team's
        # audit over an index
        tx.run("INSERT INTO hub_audit (entry_id, action, actor, replica, at, team) "
               "SELECT ?, ?, ?, ?, ?, team FROM hub_entries WHERE id = ?",
               (entry_id, action, actor, self.replica, now, entry_id))
        tx.notify(Change(action, entry_id, self.replica))

    def clock(self, tx: Tx) -> float:
        """The store's time in ``tx`` (or the clock a test gave), as every row keeps it."""
        return self._now(tx)

    def _now(self, tx: Tx) -> float:
        return self._clock() if self._clock is not None else tx.now()

    @staticmethod
    def _get(tx: Tx, entry_id: str) -> Entry | None:
        rows = tx.rows(f"SELECT {_ENTRY} FROM hub_entries WHERE id = ?", (entry_id,))
        return _entry(rows[0]) if rows else None
