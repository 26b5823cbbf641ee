"""The server's side of the desk channel: desks connect, get the batches, answer them.

Every connected desk gets a ``JsonLinesRelay`` (question events only) over its socket, so
answers and cancels reach the pending table exactly as they do from ``dsh ask --jsonl``:
first valid response wins, a bad one leaves the batch pending. ``question/requested``
carries the batch's ``source`` (who asks). A desk that goes away leaves its batch pending
for the next one, which asks for a replay and gets it under the same ``rpc_id``.

A connection counts as a desk only once it takes a batch: a desk answers every
``question/requested`` and ``permission/requested`` it reads with a ``desk/taken`` frame.
One that connects and says nothing, or a ``dsh attach`` that is stopped, takes nothing, so
a batch no desk takes within ``TAKE_WITHIN`` seconds fails ``NO_PROVIDER`` (its
``question/resolved`` then withdraws it from any desk that reads it later). A desk that
holds too many bytes already answers ``desk/full`` (``desk/link.py``); once every desk
attached has, the batch fails at once ``TOO_MANY_PENDING`` with the desk's message.

A hold (``desk/opened``) is a lease of ``HOLD_SECONDS`` (told in ``desk/hello`` as
``hold_seconds``): a desk renews it by sending ``desk/opened`` again while the entry stays
open, and one it does not renew is let go as if released, so a desk that stalls with an
entry open does not keep it taken at the others.

Permission requests (``approve_tool_use``) travel the same sockets: ``permission/requested``
(with its ``source``) and ``permission/resolved`` out, ``permission/decision`` frames in,
settled first-wins in ``RemotePermissions`` and acknowledged with ``response/ack``. Those
frames are parsed here, so the relay's question frames stay the dispatcher's alone. Every
frame that settles something names the session of what it settles (``core/ownership.py``):
a desk echoes the ``session_id`` of the event it answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, cast

from dsh_cli.core.errors import (
    BAD_FRAME,
    NO_PERMISSION_PROVIDER,
    NO_PROVIDER,
    TOO_MANY_PENDING,
    PermissionRequestError,
    UserInteractionError,
)
from dsh_cli.core.events import (
    ErrorEvent,
    Event,
    PermissionRequested,
    PermissionResolved,
    QuestionRequested,
    QuestionResolved,
)
from dsh_cli.core.tasks import close_task
from dsh_cli.desk.channel import (
    PeerRefused,
    check_peer,
    listen,
    next_number,
    peer_uid,
    socket_path,
)
from dsh_cli.interaction import (
    AskContext,
    AskUserQuestionAnswer,
    UserInteraction,
)
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.providers.relay import JsonLinesRelay

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import PermissionDecision, PermissionRequest

__all__ = ["NOT_TAKEN", "NO_DESK", "TAKE_WITHIN", "DeskHello", "DeskHub", "DeskOpened",
           "DeskPermissions", "DeskProvider", "DeskReleased", "SourcedPermissionRequested",
           "SourcedQuestionRequested"]

NO_DESK = "no one is at the dsh desk: run `dsh attach` in a terminal"
TAKE_WITHIN = 5.0  # seconds a connected desk has to take a batch before it does not count
# seconds a desk's hold (desk/opened) lasts unless the desk opens it again: a desk that
# stalls with an entry open does not mark it taken for ever (DSH_DESK_HOLD_SECONDS: tests)
HOLD_SECONDS = 30.0
NOT_TAKEN = ("no dsh desk took the {what} within {seconds:g} s (a desk that is stopped or "
             "does not answer does not count): run `dsh attach` in a terminal")
SEND_TIMEOUT = 5.0  # a desk that stops reading is dropped, never waited on forever


class SourcedQuestionRequested(QuestionRequested):
    """``question/requested`` as a desk sees it: its ``source`` is ``{client, cwd, pid}``
    (and ``server`` for an MCP server's form), with ``last_answers`` when the same
    questions were answered before (a desk highlights them, never submits them) and
    ``last_answered``: where each came from (``session_id``, ``answered_at``)."""

    last_answers: dict[str, list[str]] | None = None
    last_answered: dict[str, dict[str, str]] | None = None
    age: float | None = None  # seconds since it was asked: a desk that attaches later shows it
    number: int | None = None  # the entry's number at every desk of the user

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        for name in ("last_answers", "last_answered"):
            if not data.get(name):
                data.pop(name, None)
        return data


class SourcedPermissionRequested(PermissionRequested):
    """``permission/requested`` as a desk sees it: with ``source: {client, cwd, pid}``."""

    source: dict[str, Any]
    age: float | None = None  # seconds since it was asked
    number: int | None = None  # the entry's number at every desk of the user


PERMISSION_EVENTS = frozenset({"permission/requested", "permission/resolved"})
REQUESTED = (QuestionRequested, PermissionRequested)
RESOLVED = (QuestionResolved, PermissionResolved)
DESK_FRAMES = frozenset({"desk/taken", "desk/full", "desk/opened", "desk/released"})
DECISION_FIELDS = frozenset({"type", "rpc_id", "session_id", "decision", "message"})


class DeskOpened(Event):
    """To every other desk: a desk has opened ``rpc_id`` for answering (it is taken)."""

    type: ClassVar[str] = "desk/opened"
    rpc_id: str


class DeskReleased(Event):
    """To every other desk: no desk has ``rpc_id`` open any more (it is free again)."""

    type: ClassVar[str] = "desk/released"
    rpc_id: str


class DeskHello(Event):
    """The first line on every desk connection: which server this is, its browser URL."""

    type: ClassVar[str] = "desk/hello"
    pid: int
    cwd: str
    web_url: str | None = None
    hold_seconds: float | None = None  # a hold lasts this long unless renewed


class _DeskRelay(JsonLinesRelay):
    """The relay over one desk socket; it labels each request with who asks."""

    def __init__(self, ui: UserInteraction, sock: socket.socket, output: IO[bytes],
                 hub: DeskHub) -> None:
        super().__init__(ui, input=sock.fileno(), output=output, questions_only=True)
        self._sources = hub.sources
        self._permissions = hub.permissions
        self._respond = hub.respond_permission
        self._took = hub.took
        self._hub = hub

    def _source(self, key: str | None) -> dict[str, Any]:
        found = self._sources.get(key) if key is not None else None
        return found or {"client": None, "cwd": os.getcwd(), "pid": os.getpid()}

    def _on_event(self, event: Event) -> None:
        if event.type in PERMISSION_EVENTS:
            self.write(event)
        else:
            super()._on_event(event)

    def write(self, event: Event) -> None:
        if isinstance(event, QuestionRequested) and not isinstance(event, SourcedQuestionRequested):
            source = self._source(event.rpc_id)
            if isinstance(event.source, dict) and isinstance(event.source.get("name"), str):
                source = {**source, "server": event.source["name"]}  # whose form it is
            event = SourcedQuestionRequested(
                event.rpc_id, event.session_id, event.call_id, event.questions, source,
                event.declinable, event.review, delivery=event.delivery,
                **self._hub.last_answers(event.rpc_id),
                age=self._hub.age(event.rpc_id), number=self._hub.number(event.rpc_id))
        elif isinstance(event, PermissionRequested) \
                and not isinstance(event, SourcedPermissionRequested):
            # a permission request's source is filed under its call id (the gate mints
            # the rpc_id only as it announces the request)
            event = SourcedPermissionRequested(
                rpc_id=event.rpc_id, session_id=event.session_id, call_id=event.call_id,
                tool=event.tool, server=event.server, arguments=event.arguments,
                hints=event.hints, description=event.description,
                source=self._source(event.call_id), age=self._hub.age(event.rpc_id),
                number=self._hub.number(event.rpc_id))
        super().write(event)

    def _dispatch(self, line: str) -> None:
        kind = _frame_type(line)
        if kind in DESK_FRAMES:
            rpc_id = json.loads(line).get("rpc_id")
            if not isinstance(rpc_id, str):
                self.write(ErrorEvent(BAD_FRAME, f"{kind} takes rpc_id (a string)"))
            elif kind == "desk/taken":
                self._took(rpc_id)
            elif kind == "desk/full":
                self._hub.full(self, rpc_id, json.loads(line).get("message"))
            else:
                self._hub.hold(self, rpc_id, kind == "desk/opened")
            return
        if kind is not None and kind.startswith("permission/"):
            refused = self._permission_frame(line)
            if refused is not None:
                self.write(refused)
            return
        super()._dispatch(line)
        if kind == "questions/replay":
            for rpc_id, request in self._permissions.requests():
                self.write(PermissionRequested(
                    rpc_id=rpc_id, session_id=request.session_id, call_id=request.call_id,
                    tool=request.tool, server=request.server, arguments=request.arguments,
                    hints=request.hints.to_json()))
            for rpc_id in self._hub.held_elsewhere(self):
                self.write(DeskOpened(rpc_id))  # after the events that announce them

    def _permission_frame(self, line: str) -> Event | None:
        """A ``permission/decision`` frame goes to the hub (which acks it); others are refused."""
        frame = json.loads(line)
        if frame.get("type") != "permission/decision":
            return ErrorEvent(BAD_FRAME, f"{frame.get('type')} is not a frame dsh mcp takes")
        unknown = sorted(set(frame) - DECISION_FIELDS)
        session_id = frame.get("session_id")
        if unknown or not isinstance(frame.get("rpc_id"), str) \
                or not isinstance(session_id, str | None):
            return ErrorEvent(BAD_FRAME, "permission/decision takes rpc_id (a string), "
                                         "session_id (a string or null), decision and message" +
                              (f"; unknown: {', '.join(unknown)}" if unknown else ""))
        self._respond(frame["rpc_id"], frame.get("decision"), frame.get("message"), self.write,
                      session_id)
        return None


def _frame_type(line: str) -> str | None:
    """The ``type`` of a frame line, when it is a JSON object that has one."""
    try:
        frame = json.loads(line)
    except (ValueError, RecursionError):
        return None
    kind = frame.get("type") if isinstance(frame, dict) else None
    return kind if isinstance(kind, str) else None


class DeskHub:
    """Listens on this server's socket and relays the batches to every desk attached."""

    def __init__(self, ui: UserInteraction, *, relay_questions: bool = True,
                 web_url: str | None = None, report: Callable[[str], None] | None = None,
                 path: Path | None = None) -> None:
        self.ui = ui
        self.sources: dict[str, dict[str, Any]] = {}
        self.permissions = RemotePermissions()
        # announced permission requests, set once their decision is awaited: the gate
        # announces a request a moment before the provider waits for it, and a quick
        # desk's decision must not fall into that gap
        self._awaited: dict[str, asyncio.Event] = {}
        # batches and permission requests announced and not yet resolved, each set once a
        # desk has taken it; only those are kept, so a desk's frames cannot grow it
        self._taken: dict[str, asyncio.Event] = {}
        # which desks have each pending batch open for answering (desk/opened), so the
        # others show it as taken, each with the timer that lets its hold go unless it is
        # renewed; only pending rpc_ids, so a desk's frames cannot grow it
        self._holders: dict[str, dict[_DeskRelay, asyncio.TimerHandle]] = {}
        self.hold_seconds = hold_seconds()
        # when each pending batch was asked, so a desk that attaches later shows its true
        # age; only pending rpc_ids, as ``_taken``
        self._asked: dict[str, float] = {}
        # each pending batch's number, one counter for every dsh mcp of the user, so an
        # entry has the same number at every desk, and after a desk restarts
        self._numbers: dict[str, int | None] = {}
        # the desks that were too full to take a pending batch, and the last one's words;
        # only pending rpc_ids, as ``_taken``
        self._full: dict[str, tuple[set[_DeskRelay], str]] = {}
        self._relays: set[_DeskRelay] = set()
        self._unsubscribe: Callable[[], None] | None = None
        self._responding: set[asyncio.Task[None]] = set()
        self.relay_questions = relay_questions
        self.web_url = web_url
        self.path = path or socket_path()
        self._report = report or (lambda line: None)
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._desks: set[asyncio.Task[None]] = set()
        self._connected = 0
        self._changed = asyncio.Event()
        self._rang = False  # the no-desk alert rang since the last desk came or went

    @property
    def connected(self) -> int:
        """How many desks are attached right now."""
        return self._connected

    async def start(self) -> None:
        self._unsubscribe = self.ui.events.subscribe(self._on_event)
        self._listener = listen(self.path)
        self._listener.setblocking(False)
        self._accepting = asyncio.create_task(self._accept(), name="dsh-desk-accept")

    def ring(self, alert: Callable[[], None]) -> None:
        """``alert`` once while no desk is attached, however many batches are waiting."""
        if not self._rang:
            self._rang = True
            alert()

    async def wait_for_desk(self, seconds: float) -> bool:
        """True once a desk is attached, False when ``seconds`` pass without one."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while not self._connected:
            left = end - loop.time()
            if left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):  # keeps a cancel (see wait_taken)
                    await self._changed.wait()
        return True

    async def wait_taken(self, rpc_id: str, seconds: float | None) -> bool:
        """True once a desk has taken ``rpc_id``, False when ``seconds`` (None: no end) pass
        first or every desk was too full to take it."""
        taken = self._taken.get(rpc_id)
        if taken is None:
            return False  # resolved already, or never announced
        # asyncio.timeout, not wait_for: 3.11's wait_for drops a cancel that comes as the
        # event is set (a desk's taken and answer in one read), and the batch never ends
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await taken.wait()
        return taken.is_set() and self.too_full(rpc_id) is None

    def full(self, desk: _DeskRelay, rpc_id: str, message: Any) -> None:
        """``desk`` is too full to take ``rpc_id``; once every desk is, the wait ends."""
        taken = self._taken.get(rpc_id)
        if taken is None or taken.is_set():
            return  # settled, or taken by another desk already
        from dsh_cli.core.sanitize import one_line

        desks, _ = self._full.setdefault(rpc_id, (set(), ""))
        desks.add(desk)
        said = one_line(message, 300) if isinstance(message, str) else "the desk is full"
        self._full[rpc_id] = (desks, said)
        if self._relays <= desks:
            taken.set()

    def too_full(self, rpc_id: str) -> str | None:
        """Why no desk took ``rpc_id`` when every desk attached was too full, else None."""
        refused = self._full.get(rpc_id)
        if refused is None or not self._relays or not self._relays <= refused[0]:
            return None
        return refused[1]

    def took(self, rpc_id: str) -> None:
        """A desk took ``rpc_id``; a late or unknown one changes nothing."""
        taken = self._taken.get(rpc_id)
        if taken is not None:
            taken.set()

    def number(self, rpc_id: str) -> int | None:
        """The entry number of ``rpc_id`` at every desk, while it is pending."""
        return self._numbers.get(rpc_id)

    def age(self, rpc_id: str) -> float | None:
        """Seconds since ``rpc_id`` was asked, while it is pending."""
        asked = self._asked.get(rpc_id)
        return None if asked is None else round(time.monotonic() - asked, 1)

    def seen(self, rpc_id: str) -> bool:
        """Whether a desk has taken ``rpc_id`` while it is pending (not every desk too full)."""
        taken = self._taken.get(rpc_id)
        return taken is not None and taken.is_set() and self.too_full(rpc_id) is None

    def last_answers(self, rpc_id: str) -> dict[str, Any]:
        """The labels last chosen for the same questions and where each came from, when the
        store knows them (``last_answers`` and ``last_answered`` of the desk's event)."""
        entry = self.ui.pending.get(rpc_id)  # looked up once, off the loop, as it registered
        if entry is None:
            return {}
        return {"last_answers": entry.context.last_answers or None,
                "last_answered": entry.context.last_answered or None}

    def hold(self, desk: _DeskRelay, rpc_id: str, opened: bool) -> None:
        """``desk`` opened (or renewed, or released) ``rpc_id``; the other desks hear what
        changed. A hold not renewed within ``hold_seconds`` is released."""
        if rpc_id not in self._taken:
            return  # settled already, or never announced: nothing to hold
        holders = self._holders.setdefault(rpc_id, {})
        before = {other: bool(holders.keys() - {other}) for other in self._relays}
        expiring = holders.pop(desk, None)
        if expiring is not None:
            expiring.cancel()
        if opened:
            holders[desk] = asyncio.get_running_loop().call_later(
                self.hold_seconds, self.hold, desk, rpc_id, False)
        if not holders:
            del self._holders[rpc_id]
        self._tell_holders(rpc_id, before)

    def held_elsewhere(self, desk: _DeskRelay) -> list[str]:
        """The batches another desk has open, for ``desk``'s replay."""
        return [rpc_id for rpc_id, holders in self._holders.items()
                if holders.keys() - {desk}]

    def _tell_holders(self, rpc_id: str, before: dict[_DeskRelay, bool]) -> None:
        holders = self._holders.get(rpc_id, {})
        for other, was in before.items():
            now = bool(holders.keys() - {other})
            if now != was:
                other.write(DeskOpened(rpc_id) if now else DeskReleased(rpc_id))

    def _gone(self, desk: _DeskRelay) -> None:
        """A desk hung up (closed, or killed mid-answer): what it held is free again."""
        self._relays.discard(desk)
        for rpc_id in [rpc_id for rpc_id, holders in self._holders.items() if desk in holders]:
            self.hold(desk, rpc_id, False)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, REQUESTED):
            self._taken.setdefault(event.rpc_id, asyncio.Event())
            if event.rpc_id not in self._asked:
                self._asked[event.rpc_id] = time.monotonic()
                self._numbers[event.rpc_id] = next_number(self.path.parent)
        elif isinstance(event, RESOLVED):
            self._taken.pop(event.rpc_id, None)
            self._full.pop(event.rpc_id, None)
            self._asked.pop(event.rpc_id, None)
            self._numbers.pop(event.rpc_id, None)
            for expiring in self._holders.pop(event.rpc_id, {}).values():
                expiring.cancel()  # its resolution says the rest
        if isinstance(event, PermissionRequested):
            self._awaited.setdefault(event.rpc_id, asyncio.Event())
        elif isinstance(event, PermissionResolved):
            waiting = self._awaited.pop(event.rpc_id, None)
            if waiting is not None:
                waiting.set()

    def awaited(self, rpc_id: str) -> None:
        """The provider now waits for ``rpc_id``'s decision: held decisions may land."""
        waiting = self._awaited.get(rpc_id)
        if waiting is not None:
            waiting.set()

    def respond_permission(self, rpc_id: str, decision: Any, message: Any,
                           write: Callable[[Event], None], session_id: str | None = None) -> None:
        """Settle ``rpc_id`` and ``write`` the ack, once the request is really awaited."""
        waiting = self._awaited.get(rpc_id)
        if waiting is None or waiting.is_set():
            write(self.permissions.respond(rpc_id, decision, message, session_id))
            return

        async def when_awaited() -> None:
            await waiting.wait()
            write(self.permissions.respond(rpc_id, decision, message, session_id))

        task = asyncio.ensure_future(when_awaited())
        self._responding.add(task)
        task.add_done_callback(self._responding.discard)

    async def close(self) -> None:
        """Stop listening, drop every desk, remove the socket file."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for responding in list(self._responding):
            responding.cancel()
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
        for task in list(self._desks):
            task.cancel()
        for task in list(self._desks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                self.path.unlink()

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._listener is not None
        while True:
            conn, _ = await loop.sock_accept(self._listener)
            try:
                check_peer(peer_uid(conn))
            except PeerRefused as refused:
                self._report(str(refused))
                conn.close()
                continue
            task = asyncio.create_task(self._serve(conn), name="dsh-desk")
            self._desks.add(task)
            task.add_done_callback(self._desks.discard)

    async def _serve(self, conn: socket.socket) -> None:
        """One desk, until it hangs up; its pending batches stay for the next desk."""
        conn.setblocking(True)  # read by the relay's thread, written in small lines
        seconds, micro = int(SEND_TIMEOUT), int((SEND_TIMEOUT % 1) * 1e6)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", seconds, micro))
        output = cast("IO[bytes]", conn.makefile("wb", buffering=0))  # a raw SocketIO
        relay = _DeskRelay(self.ui, conn, output, self)
        relay.write(DeskHello(os.getpid(), os.getcwd(), self.web_url, self.hold_seconds))
        self._relays.add(relay)
        self._connected += 1
        self._rang = False
        self._changed.set()
        try:
            if self.relay_questions:
                await relay.start()
                await relay.eof.wait()
            else:
                await _until_closed(conn)
        finally:
            self._connected -= 1
            self._rang = False
            self._changed.set()
            self._gone(relay)
            await relay.close()
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # ends the relay thread's blocking read
            output.close()
            conn.close()


def hold_seconds() -> float:
    """How long a hold lasts unrenewed: ``HOLD_SECONDS``, or ``DSH_DESK_HOLD_SECONDS``."""
    with contextlib.suppress(ValueError):
        given = float(os.environ.get("DSH_DESK_HOLD_SECONDS", ""))
        if 0 < given < float("inf"):
            return given
    return HOLD_SECONDS


async def _until_closed(conn: socket.socket) -> None:
    """Wait for a desk that only listens (a ``--web`` server relays no batches) to leave."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()

    def readable() -> None:
        try:
            data = conn.recv(4096, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data and not closed.done():
            closed.set_result(None)

    loop.add_reader(conn.fileno(), readable)
    try:
        await closed
    finally:
        loop.remove_reader(conn.fileno())


class DeskProvider:
    """Answers come from a desk through the pending table; with no desk, ``NO_PROVIDER``."""

    # the provenance the store keeps with each answer, which comes through the table
    answered_through_table = "desk"
    concurrent = True  # the inbox lists every pending batch: none waits behind another

    def __init__(self, hub: DeskHub, *, wait: float = 0.0,
                 alert: Callable[[], None] | None = None) -> None:
        self.hub = hub
        self.wait = wait
        self._alert = alert

    def seen(self, rpc_id: str) -> bool:
        """Whether a desk has taken ``rpc_id`` (it is in some human's inbox)."""
        return self.hub.seen(rpc_id)

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        entry = self.hub.ui.pending.get(context.rpc_id)
        if entry is not None and entry.delivery == "async":
            # no tool call waits for it: pending under its ticket (until its timeout, or
            # its session ends) for the first desk that takes it, a desk attaching later in
            # its replay; every attached desk too full to hold it ends it, as a waiting one
            await self.hub.wait_taken(context.rpc_id, None)
            full = self.hub.too_full(context.rpc_id)
            if full is not None:
                raise UserInteractionError(full, TOO_MANY_PENDING)
            await asyncio.get_running_loop().create_future()
        found = await _desk_takes(self.hub, context.rpc_id, self.wait, self._alert,
                                  "question")
        if found is not None:
            full = self.hub.too_full(context.rpc_id)
            raise UserInteractionError(found, NO_PROVIDER if full is None else TOO_MANY_PENDING)
        await asyncio.get_running_loop().create_future()  # a desk settles it, or the seam does
        raise AssertionError("unreachable")


async def _desk_takes(hub: DeskHub, rpc_id: str, wait: float,
                      alert: Callable[[], None] | None, what: str) -> str | None:
    """None once a desk has taken ``rpc_id``; else why no desk will (``NO_DESK``, ``NOT_TAKEN``).

    With no desk attached it fails at once, or waits up to ``wait`` seconds for one; an
    attached desk then has ``TAKE_WITHIN`` seconds (or what is left of ``wait``) to take it.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    if not hub.connected:
        if wait > 0 and alert is not None:
            hub.ring(alert)  # batches are handed over at once: one bell, not one each
        if wait <= 0 or not await hub.wait_for_desk(wait):
            return NO_DESK
    if not await hub.wait_taken(rpc_id, max(TAKE_WITHIN, end - loop.time())):
        return hub.too_full(rpc_id) or NOT_TAKEN.format(what=what, seconds=TAKE_WITHIN)
    return None


class DeskPermissions:
    """Permission requests decided at a desk; with none, ``NO_PERMISSION_PROVIDER`` at once."""

    def __init__(self, hub: DeskHub, *, wait: float = 0.0,
                 alert: Callable[[], None] | None = None) -> None:
        self.hub = hub
        self.wait = wait
        self._alert = alert

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        # pending first, so a desk that attaches during the wait gets it in its replay
        decided = asyncio.ensure_future(self.hub.permissions.decide(request, rpc_id))
        await asyncio.sleep(0)  # the request is pending in the table now
        self.hub.awaited(rpc_id)
        taking = asyncio.ensure_future(_desk_takes(self.hub, rpc_id, self.wait, self._alert,
                                                   "permission request"))
        try:
            # a decision that comes first stands, taken or not
            await asyncio.wait({decided, taking}, return_when=asyncio.FIRST_COMPLETED)
            if not decided.done():
                found = taking.result()
                if found is not None:
                    raise PermissionRequestError(found, NO_PERMISSION_PROVIDER)
            return await decided
        finally:
            await close_task(taking)
            await close_task(decided)
