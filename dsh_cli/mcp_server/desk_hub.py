"""The hub of desks: ``dsh mcp`` listens, desks connect, get the batches, answer them.

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
settled first-wins in ``RemotePermissions`` and acknowledged with ``response/ack``. Every
frame that settles something names the session of what it settles (``core/ownership.py``):
a desk echoes the ``session_id`` of the event it answers.

Each line a desk sends is read once, at the edge, by the desk protocol's parser
(``desk/protocol.py``'s ``read_frame``); what comes out is a typed frame the hub acts on, or
a ``BadFrame`` the desk is told of. The providers that wait on the hub are in ``desks.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

from dsh_cli.core.events import (
    Event,
    PermissionRequested,
    PermissionResolved,
    QuestionRequested,
    QuestionResolved,
)
from dsh_cli.core.tuning import seconds_from_env
from dsh_cli.desk.channel import (
    PeerRefused,
    check_peer,
    listen,
    next_number,
    peer_uid,
    socket_path,
)
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskDecision,
    DeskFull,
    DeskHello,
    DeskOpened,
    DeskPermissionRequested,
    DeskQuestionRequested,
    DeskReleased,
    DeskReplay,
    DeskTaken,
    Encodable,
    read_frame,
)
from dsh_cli.interaction import UserInteraction
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.providers.frames import Frame
from dsh_cli.providers.relay import JsonLinesRelay

__all__ = ["HOLD_SECONDS", "DeskHub", "hold_seconds"]

# seconds a desk's hold (desk/opened) lasts unless the desk opens it again: a desk that
# stalls with an entry open does not mark it taken for ever (DSH_DESK_HOLD_SECONDS: tests)
HOLD_SECONDS = 30.0
SEND_TIMEOUT = 5.0  # a desk that stops reading is dropped, never waited on forever


REQUESTED = (QuestionRequested, PermissionRequested)
RESOLVED = (QuestionResolved, PermissionResolved)


class _DeskRelay(JsonLinesRelay):
    """The relay over one desk socket; it labels each request with who asks."""

    def __init__(self, ui: UserInteraction, sock: socket.socket, output: IO[bytes],
                 hub: DeskHub) -> None:
        super().__init__(ui, input=sock.fileno(), output=output, questions_only=True)
        self._sources = hub.sources
        self._permissions = hub.permissions
        self._hub = hub

    def _source(self, key: str | None) -> dict[str, Any]:
        found = self._sources.get(key) if key is not None else None
        return found or {"client": None, "cwd": os.getcwd(), "pid": os.getpid()}

    def _on_event(self, event: Event) -> None:
        if isinstance(event, PermissionRequested | PermissionResolved):
            self.write(event)
        else:
            super()._on_event(event)

    def write(self, event: Encodable) -> None:
        """One event to the desk; a request as the desk sees it (who asks, its number)."""
        if isinstance(event, QuestionRequested):
            source = self._source(event.rpc_id)
            if isinstance(event.source, dict) and isinstance(event.source.get("name"), str):
                source = {**source, "server": event.source["name"]}  # whose form it is
            event = DeskQuestionRequested(
                rpc_id=event.rpc_id, session_id=event.session_id, call_id=event.call_id,
                questions=event.questions, source=source, declinable=event.declinable,
                review=event.review, delivery=event.delivery,
                **self._hub.last_answers(event.rpc_id),
                age=self._hub.age(event.rpc_id), number=self._hub.number(event.rpc_id))
        elif isinstance(event, PermissionRequested):
            # a permission request's source is filed under its call id (the gate mints
            # the rpc_id only as it announces the request)
            event = DeskPermissionRequested(
                rpc_id=event.rpc_id, session_id=event.session_id, call_id=event.call_id,
                tool=event.tool, server=event.server, arguments=event.arguments,
                hints=event.hints, description=event.description,
                source=self._source(event.call_id), age=self._hub.age(event.rpc_id),
                number=self._hub.number(event.rpc_id))
        super().write(event)

    def _dispatch(self, line: str) -> None:
        """One desk line, read once (``desk/protocol.py``), then acted on."""
        try:
            frame = read_frame(line)
        except BadFrame as error:
            self.write(error.event())
            return
        if isinstance(frame, DeskTaken):
            self._hub.took(frame.rpc_id)
        elif isinstance(frame, DeskFull):
            self._hub.full(self, frame.rpc_id, frame.message)
        elif isinstance(frame, DeskOpened | DeskReleased):
            self._hub.hold(self, frame.rpc_id, isinstance(frame, DeskOpened))
        elif isinstance(frame, DeskDecision):  # the hub acks it, once the request is awaited
            self._hub.respond_permission(frame.rpc_id, frame.decision, frame.message,
                                         self.write, frame.session_id)
        elif isinstance(frame, DeskReplay):
            for event in frame.apply(self._frames):
                self.write(event)
            for rpc_id, request in self._permissions.requests():
                self.write(PermissionRequested(
                    rpc_id=rpc_id, session_id=request.session_id, call_id=request.call_id,
                    tool=request.tool, server=request.server, arguments=request.arguments,
                    hints=request.hints.to_json()))
            for rpc_id in self._hub.held_elsewhere(self):
                self.write(DeskOpened(rpc_id=rpc_id))  # after the events that announce them
        elif isinstance(frame, Frame):  # an answer, a cancel, a decline: as dsh ask --jsonl
            for event in frame.apply(self._frames):
                self.write(event)


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
                other.write(DeskOpened(rpc_id=rpc_id) if now else DeskReleased(rpc_id=rpc_id))

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
                           write: Callable[[Encodable], None],
                           session_id: str | None = None) -> None:
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
        relay.write(DeskHello(pid=os.getpid(), cwd=os.getcwd(), web_url=self.web_url,
                              hold_seconds=self.hold_seconds))
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
    return seconds_from_env("DSH_DESK_HOLD_SECONDS", HOLD_SECONDS)


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


