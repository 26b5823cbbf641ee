"""``/desk``: the humans' side of a serving hub, the desk protocol over HTTP.

A desk speaks to the hub what it speaks to a ``dsh mcp`` over the Unix socket
(``desk/protocol.py``), one JSON object a line, carried by two requests, each with a human's
``Authorization: Bearer`` token (an agent's token, or none: 401):

    GET /desk   an ``application/x-ndjson`` stream of TO_DESK frames: ``desk/hello`` (the
                claim lease as ``hold_seconds``, this stream's ``connection``, the ``human``),
                every pending entry the human may see as ``question/requested`` or
                ``permission/requested`` (``rpc_id`` = the entry's id, its ``age``), then each
                change as it is heard: another's claim as ``desk/opened`` (``by`` names who
                holds it) and ``desk/released``, a settlement as ``question/resolved`` or
                ``permission/resolved``. An empty line every ``HEARTBEAT_SECONDS`` lets either
                end notice a connection that died silently.
    POST /desk  one TO_SERVER frame; the reply frames are the body (NDJSON, 200): an answer's
                ``response/ack``, an ``error`` for what is no frame. ``X-Dsh-Desk`` naming the
                stream's ``connection`` makes the frame that stream's (below).

What a stream has told its desk is all it keeps (``DeskStream.told``): a change heard from the
store (``HubWatch``) only marks its entry to be read again, and the stream's own loop reads the
marked entries off the event loop and writes what differs from what it told. So a desk that
reads slowly holds back only its own loop (the socket's flow control), never a queue: the
marks are at most ``HUB_DESK_WAKES`` ids (past that, and on a change the watch may have missed,
the whole pending list is read again) and ``told`` at most ``HUB_DESK_ENTRIES`` entries.

An answer is checked against the entry before the store's conditional update, with dsh mcp's
reasons (``not-pending``, ``wrong-session``, ``bad-response``), so an invalid answer never wins
and the entry stays pending. A claim (``desk/opened``) is the store's lease (``hub.lease``),
renewed by sending it again; the desk that holds it is not told of its own claim. When a stream
ends (the desk went away) the claims made through it in this hub process are released; a claim
made through another hub process, or one this process could not release, lapses with its lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_cli.core.decisions import DECISIONS
from dsh_cli.core.errors import UserInteractionError
from dsh_cli.core.events import BAD_RESPONSE, NOT_PENDING, ResponseAck
from dsh_cli.core.http_body import capped_body
from dsh_cli.core.limits import FRAME_BYTES, HUB_DESK_ENTRIES, HUB_DESK_STREAMS, HUB_DESK_WAKES
from dsh_cli.core.limits import PERMISSION_MESSAGE_CHARACTERS as MAX_MESSAGE
from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.ownership import refusal
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskAck,
    DeskAnswer,
    DeskCancel,
    DeskDecision,
    DeskDecline,
    DeskError,
    DeskFull,
    DeskHello,
    DeskOpened,
    DeskPermissionRequested,
    DeskPermissionResolved,
    DeskQuestionRequested,
    DeskQuestionResolved,
    DeskReleased,
    DeskReplay,
    DeskTaken,
    Encodable,
    Readable,
    encode,
    kind,
    read_frame,
)
from dsh_cli.hub.context import HubContext, holder
from dsh_cli.hub.records import (
    Answered,
    Change,
    Claimed,
    Entry,
    HubStoreError,
    Renewed,
    TakenBy,
    Token,
)
from dsh_cli.hub.routes import teams_of, visible

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

__all__ = ["CONNECTION_HEADER", "HEARTBEAT_SECONDS", "NDJSON", "DeskStream", "desk_routes"]

NDJSON = "application/x-ndjson"
CONNECTION_HEADER = "x-dsh-desk"  # a POST naming the stream (its hello's ``connection``)
HEARTBEAT_SECONDS = 15.0  # an empty line this often on an idle stream
RETRY_SECONDS = 1.0  # after the store failed a stream's read: the next try, all re-read

Settling = DeskAnswer | DeskCancel | DeskDecline | DeskDecision


@dataclass(frozen=True)
class _Read:
    """What one read of the store found: the entries (None: no such entry any more), and
    the store's clock then (leases and ages are the store's time)."""

    entries: dict[str, Entry | None]
    now: float


def announcement(entry: Entry, now: float) -> DeskQuestionRequested | DeskPermissionRequested:
    """The event a desk sees for a pending entry: its batch, ``rpc_id`` = the entry's id,
    ``age``, and ``source`` as the hub knows the asker (a form's ``server`` kept)."""
    model = DeskPermissionRequested if entry.kind == "permission" else DeskQuestionRequested
    given = entry.batch.get("source")
    source: dict[str, Any] = {"client": entry.agent, "machine": entry.machine,
                              "cwd": entry.cwd, "token": entry.token}
    if isinstance(given, dict) and isinstance(given.get("server"), str):
        source["server"] = given["server"]  # whose form it is: the inbox shows it so
    event = {name: value for name, value in entry.batch.items()
             if name not in ("rpc_id", "age", "number")}
    event.update(type=kind(model), rpc_id=entry.id, source=source,
                 age=round(max(0.0, now - entry.created_at), 1))
    return model.model_validate(event)


def opened(entry_id: str, by: str) -> DeskOpened:
    """``desk/opened`` from the hub: another desk has the entry, held by human ``by``."""
    return DeskOpened.model_validate({"type": kind(DeskOpened), "rpc_id": entry_id, "by": by})


def resolution(entry: Entry | None, entry_id: str
               ) -> DeskQuestionResolved | DeskPermissionResolved:
    """How a desk hears that an entry left pending, in the words of ``core/outcomes.py``."""
    said = entry.answer if entry is not None and entry.answer is not None else {}
    if entry is not None and entry.kind == "permission":
        if entry.answered and said.get("type") == kind(DeskDecision):
            return DeskPermissionResolved(rpc_id=entry_id, outcome="decided",
                                          decision=str(said.get("decision")))
        ended = (Outcome.CANCELLED if entry.answered  # a frame that is no decision
                 else Outcome.TIMED_OUT if entry.timed_out else Outcome.ABORTED)
        return DeskPermissionResolved(rpc_id=entry_id, outcome=ended.event)
    if entry is None:  # forgotten by retention: nobody can answer it any more
        outcome = Outcome.ABORTED
    elif entry.answered:
        outcome = {kind(DeskCancel): Outcome.CANCELLED, kind(DeskDecline): Outcome.DECLINED
                   }.get(str(said.get("type")), Outcome.ANSWERED)
    else:  # the agent withdrew it (its call ended), or its deadline passed
        outcome = Outcome.TIMED_OUT if entry.timed_out else Outcome.ABORTED
    return DeskQuestionResolved(rpc_id=entry_id, outcome=outcome.event)


def _store_now(hub: HubContext) -> float:
    """The store's clock (PostgreSQL's, shared by every hub process), read off the loop."""
    with hub.store.engine.transaction() as tx:
        return tx.now()


class DeskStream:
    """One desk's ``GET /desk``: what it was told, what to read again, its own claims."""

    def __init__(self, hub: HubContext, human: Token) -> None:
        self.hub = hub
        self.human = human
        self.connection = secrets.token_urlsafe(16)
        # pending entries announced to this desk -> who it was told holds each (None: free)
        self.told: dict[str, str | None] = {}
        self.lapses: dict[str, float] = {}  # told as held: when that lease ends (store time)
        self.claims: set[str] = set()  # entries claimed through this desk, in this process
        self._wakes: set[str] = set()  # entries changed since the last read
        self._everything = True  # read the whole pending list again (first, or missed)
        self._overflowed = False  # an entry went unannounced: ``told`` was full
        self._reading = False  # a read is under way: what it finds is not told yet
        self._woken = asyncio.Event()
        self._offset = 0.0  # store time - this host's time, as of the last read
        self._ended = False  # the hub is stopping: the stream ends at its next turn

    def end(self) -> None:
        """The hub is stopping: the stream ends (its desk reconnects, elsewhere or later)."""
        self._ended = True
        self._woken.set()

    def heed(self, change: Change | None) -> None:
        """On the loop, from the watch: mark what to read again; the stream's loop reads it."""
        if change is None:
            self._everything = True
        elif not self._everything and (change.entry_id in self.told or change.event == "ask"
                                       or self._reading):
            # an entry neither told nor being read is none of this desk's (another human's,
            # or past HUB_DESK_ENTRIES): its claims need no read
            self._wakes.add(change.entry_id)
            if len(self._wakes) > HUB_DESK_WAKES:  # cheaper as one read of the list
                self._everything, self._wakes = True, set()
        else:
            return
        self._woken.set()

    async def lines(self) -> AsyncIterator[bytes]:
        """The stream's lines: the hello, what is pending, then each change, until cancelled."""
        # with the extra fields of a hub: this stream's name for POSTs, whose desk it is
        yield encode(DeskHello.model_validate({
            "type": kind(DeskHello), "hold_seconds": self.hub.lease,
            "connection": self.connection, "human": self.human.name}))
        while not self._ended:
            due = self._due()
            if not (self._everything or self._wakes or due):
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._wait()):
                        await self._woken.wait()
                self._woken.clear()
                if self._ended:
                    return
                due = self._due()
                if not (self._everything or self._wakes or due):
                    yield b"\n"  # idle: the heartbeat
                    continue
            self._woken.clear()  # what is marked from now on is read next round
            everything, wanted = self._everything, self._wakes | due
            self._everything, self._wakes = False, set()
            self._reading = True
            try:
                found = await asyncio.to_thread(self._read, everything, wanted)
            except HubStoreError as error:
                self.hub.report(f"desk stream of {self.human.name}: {error.code}: "
                                f"{error.message}")
                self._everything = True
                await asyncio.sleep(RETRY_SECONDS)
                continue
            finally:
                self._reading = False
            for frame in self._tell(found):
                yield encode(frame)

    def _due(self) -> set[str]:
        """The entries told as held whose lease has ended by now (to be read again)."""
        now = time.time() + self._offset
        return {entry_id for entry_id, ends in self.lapses.items() if ends <= now}

    def _wait(self) -> float:
        """Until the next heartbeat, or the first told lease to end, whichever comes first."""
        if not self.lapses:
            return HEARTBEAT_SECONDS
        first = min(self.lapses.values()) - (time.time() + self._offset)
        return max(0.0, min(HEARTBEAT_SECONDS, first + 0.05))

    def _read(self, everything: bool, wanted: Iterable[str]) -> _Read:
        """Off the loop: the entries to compare with what was told, and the store's clock."""
        store = self.hub.store
        entries: dict[str, Entry | None] = {}
        if everything:
            for entry in store.pending(limit=HUB_DESK_ENTRIES, teams=teams_of(self.human)):
                entries[entry.id] = entry
            wanted = {*wanted, *self.told}  # those no longer listed: how they ended
        for entry_id in wanted:
            if entry_id not in entries:
                entries[entry_id] = store.get(entry_id)
        now = _store_now(self.hub)
        self._offset = now - time.time()
        return _Read(entries, now)

    def _tell(self, found: _Read) -> list[Encodable]:
        """What differs from what the desk was told, as frames; ``told`` updated."""
        frames: list[Encodable] = []
        freed = False
        # oldest first, as asked: a desk sees an entry's changes before a later entry's
        ordered = sorted(found.entries.items(),
                         key=lambda item: item[1].created_at if item[1] else float("inf"))
        for entry_id, entry in ordered:
            shown = entry is not None and entry.state == "pending" and visible(entry, self.human)
            if not shown:
                if entry_id in self.told:
                    del self.told[entry_id]
                    self.lapses.pop(entry_id, None)
                    self.claims.discard(entry_id)
                    frames.append(resolution(entry, entry_id))
                    freed = True
                continue
            assert entry is not None
            if entry_id not in self.told:
                if len(self.told) >= HUB_DESK_ENTRIES:
                    self._overflowed = True  # announced once another settles
                    continue
                self.told[entry_id] = None
                frames.append(announcement(entry, found.now))
            by = entry.taken_by(found.now)
            if by == self.human.name and entry_id in self.claims:
                by = None  # this desk's own claim: it knows it has the entry open
            if by is not None and entry.claim_expires is not None:
                self.lapses[entry_id] = entry.claim_expires
            else:
                self.lapses.pop(entry_id, None)
            if by != self.told[entry_id]:
                self.told[entry_id] = by
                frames.append(opened(entry_id, by) if by is not None
                              else DeskReleased(rpc_id=entry_id))
        if freed and self._overflowed:
            self._overflowed, self._everything = False, True
            self._woken.set()
        return frames


class DeskDoor:
    """The hub's ``/desk``: the streams open in this process, and each POSTed frame."""

    def __init__(self, hub: HubContext) -> None:
        self.hub = hub
        self.streams: dict[str, DeskStream] = {}
        self._releasing: set[asyncio.Task[None]] = set()  # held until done

    def stopping(self) -> None:
        """The hub is stopping: every stream open here ends now."""
        for stream in self.streams.values():
            stream.end()

    async def human(self, request: Request) -> Token | Response:
        """The human whose token the request carries, or the 401 saying what is needed."""
        from starlette.responses import PlainTextResponse

        token = await holder(self.hub, request.headers)
        if token is not None and token.kind == "human":
            return token
        said = ("this is an agent's token: /desk takes a human's" if token is not None
                else "a human's hub token is needed (Authorization: Bearer; `dsh hub token "
                     "add NAME --human`)")
        return PlainTextResponse(said + "\n", status_code=401,
                                 headers={"WWW-Authenticate": "Bearer"})

    async def stream(self, request: Request) -> Response:
        from starlette.responses import PlainTextResponse, StreamingResponse

        human = await self.human(request)
        if not isinstance(human, Token):
            return human
        if sum(desk.human.name == human.name for desk in self.streams.values()) >= \
                HUB_DESK_STREAMS:
            return PlainTextResponse(f"{human.name} has {HUB_DESK_STREAMS} desks open at this "
                                     "hub already: close one\n", status_code=429)
        desk = DeskStream(self.hub, human)
        self.streams[desk.connection] = desk
        unsubscribe = self.hub.watch.subscribe(desk.heed)

        async def lines() -> AsyncIterator[bytes]:
            checked = time.monotonic()
            try:
                async for line in desk.lines():
                    yield line
                    if time.monotonic() - checked >= HEARTBEAT_SECONDS:
                        checked = time.monotonic()
                        if not await self._still_held(human):
                            return  # its desk reconnects, and hears the 401
            finally:  # the desk hung up (or the hub is stopping): its claims go
                unsubscribe()
                self.streams.pop(desk.connection, None)
                self.release_claims(desk)

        return StreamingResponse(lines(), media_type=NDJSON,
                                 headers={"Cache-Control": "no-store",
                                          "X-Accel-Buffering": "no"})

    async def _still_held(self, human: Token) -> bool:
        """Whether ``human``'s token is still the one kept (not removed, nor made again); a
        stream checks at least every heartbeat, so a removed token reads no more entries."""
        try:
            return await asyncio.to_thread(self.hub.store.token, human.name) == human
        except HubStoreError as error:  # the store is away: the stream goes on meanwhile
            self.hub.report(f"{error.code}: {error.message}")
            return True

    def release_claims(self, desk: DeskStream) -> None:
        """Let go of what ``desk`` claimed, off the loop, in a task of its own (its stream's
        task is being cancelled)."""
        if not desk.claims:
            return
        claims, human = list(desk.claims), desk.human.name

        def release() -> None:
            for entry_id in claims:
                try:
                    self.hub.store.release(entry_id, human)
                except HubStoreError as error:  # the lease lapses instead
                    self.hub.report(f"{error.code}: {error.message}")

        task = asyncio.ensure_future(asyncio.to_thread(release))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def post(self, request: Request) -> Response:
        from starlette.requests import ClientDisconnect
        from starlette.responses import Response

        human = await self.human(request)
        if not isinstance(human, Token):
            return human
        try:
            body = await capped_body(request, FRAME_BYTES + 2)  # a line and its CRLF
        except ClientDisconnect:
            return Response(status_code=400)
        try:
            if body is None:
                raise BadFrame(f"a frame is at most {FRAME_BYTES} bytes")
            frame = read_frame(body.rstrip(b"\r\n"))
        except BadFrame as error:
            replies: list[Encodable] = [DeskError(code=error.code, message=error.message)]
        else:
            desk = self.streams.get(request.headers.get(CONNECTION_HEADER, ""))
            if desk is not None and desk.human.name != human.name:
                desk = None  # another human's stream: never theirs to change
            try:
                replies = await self.apply(frame, human, desk)
            except HubStoreError as error:  # the store is away: nothing changed, say so
                self.hub.report(f"{error.code}: {error.message}")
                replies = [DeskError(code=error.code, message=error.message)]
        return Response(b"".join(encode(reply) for reply in replies), media_type=NDJSON)

    async def apply(self, frame: Readable, human: Token,
                    desk: DeskStream | None) -> list[Encodable]:
        """What one frame from ``human``'s desk does; the frames to reply with."""
        if isinstance(frame, DeskTaken | DeskFull):
            # a desk says whether it holds an entry so dsh mcp can fail a batch no desk
            # took; the hub's entries wait in the store for any human: nothing to count
            if isinstance(frame, DeskFull):
                self.hub.report(f"{human.name}'s desk is full: {frame.rpc_id} not shown there")
            return []
        if isinstance(frame, DeskReplay):
            return await asyncio.to_thread(self._replay, human)
        assert isinstance(frame, DeskOpened | DeskReleased | Settling)  # TO_SERVER's kinds
        entry = await asyncio.to_thread(self.hub.store.get, frame.rpc_id)
        if entry is not None and not visible(entry, human):
            entry = None  # not this human's to see: as if there were none
        if isinstance(frame, DeskOpened | DeskReleased):
            return await self._hold(frame, entry, human, desk)
        checked = _check(frame, entry)
        if isinstance(checked, ResponseAck):
            return [_ack(checked)]
        said = {name: value for name, value in frame.to_json().items() if name != "rpc_id"}
        won = await asyncio.to_thread(self.hub.store.answer, frame.rpc_id, said, human.name)
        if desk is not None:
            desk.claims.discard(frame.rpc_id)
        if isinstance(won, Answered):
            return [DeskAck(rpc_id=frame.rpc_id, accepted=True)]
        return [_ack(_not_pending(frame))]

    async def _hold(self, frame: DeskOpened | DeskReleased, entry: Entry | None, human: Token,
                    desk: DeskStream | None) -> list[Encodable]:
        """A claim (taken, renewed, or someone else's: said back) or its release."""
        if entry is None or entry.state != "pending":
            return []  # settled: the stream says how
        store = self.hub.store
        if isinstance(frame, DeskReleased):
            await asyncio.to_thread(store.release, entry.id, human.name)
            if desk is not None:
                desk.claims.discard(entry.id)
            return []
        if desk is not None:  # before the store hears it: the stream never tells it back
            desk.claims.add(entry.id)
        held = await asyncio.to_thread(store.claim, entry.id, human.name, self.hub.lease)
        if isinstance(held, Claimed | Renewed):
            return []
        if desk is not None:
            desk.claims.discard(entry.id)
        if isinstance(held, TakenBy):  # the desk may still answer: the first answer counts
            return [opened(entry.id, held.human)]
        return []  # settled meanwhile: the stream says how

    def _replay(self, human: Token) -> list[Encodable]:
        """Off the loop: every pending entry ``human`` may see, and who holds each."""
        now = _store_now(self.hub)
        frames: list[Encodable] = []
        for entry in self.hub.store.pending(limit=HUB_DESK_ENTRIES, teams=teams_of(human)):
            if not visible(entry, human):
                continue
            frames.append(announcement(entry, now))
            by = entry.taken_by(now)
            if by is not None:
                frames.append(opened(entry.id, by))
        return frames


def _not_pending(frame: Settling) -> ResponseAck:
    what = "permission" if isinstance(frame, DeskDecision) else "question"
    return ResponseAck(frame.rpc_id, False, NOT_PENDING, f"no pending {what} {frame.rpc_id}")


def _check(frame: Settling, entry: Entry | None) -> ResponseAck | None:
    """Why ``frame`` cannot settle ``entry`` (as dsh mcp's tables say it), or None when it can.

    Kind first (a decision names no question, an answer no permission request: not pending,
    as in dsh mcp, where each kind has its own table), then the session, then the answer.
    """
    rpc_id = frame.rpc_id
    if entry is None or entry.state != "pending":
        return _not_pending(frame)
    permission = entry.kind == "permission"
    if isinstance(frame, DeskDecision) != permission and not isinstance(frame, DeskCancel):
        return _not_pending(frame)  # a cancel dismisses either kind
    owner = entry.batch.get("session_id")
    denied = refusal(rpc_id, owner if isinstance(owner, str) else None, frame.session_id)
    if denied is not None:
        return denied
    if isinstance(frame, DeskDecision):
        if frame.decision not in DECISIONS:
            return ResponseAck(rpc_id, False, BAD_RESPONSE,
                               f"decision must be one of {', '.join(DECISIONS)}")
        if frame.message is not None and len(frame.message) > MAX_MESSAGE:
            return ResponseAck(rpc_id, False, BAD_RESPONSE,
                               f"message must be a string of at most {MAX_MESSAGE} characters")
    elif isinstance(frame, DeskDecline) and entry.batch.get("declinable") is not True:
        return ResponseAck(rpc_id, False, BAD_RESPONSE,
                           f"{rpc_id} cannot be declined: answer or cancel it")
    elif isinstance(frame, DeskAnswer):
        return _check_answers(rpc_id, entry, frame.answers)
    return None


def _check_answers(rpc_id: str, entry: Entry, answers: list[Any]) -> ResponseAck | None:
    """The answers against the batch's questions (``validate_answer``), as dsh mcp checks."""
    from pydantic import ValidationError

    from dsh_cli.interaction.validation import validate_answer
    from dsh_cli.interaction.vocabulary import AskUserQuestionRequest

    try:
        request = AskUserQuestionRequest.model_validate(
            {"questions": entry.batch.get("questions"),
             "declinable": entry.batch.get("declinable") is True})
    except ValidationError:
        return ResponseAck(rpc_id, False, BAD_RESPONSE,
                           f"{rpc_id}'s questions cannot be answered here (not a valid batch)")
    try:
        validate_answer(request, {"answers": answers})
    except UserInteractionError as error:
        return ResponseAck(rpc_id, False, BAD_RESPONSE, error.message)
    return None


def _ack(ack: ResponseAck) -> DeskAck:
    return DeskAck.model_validate(ack.to_json())


def desk_routes(hub: HubContext) -> list[Route]:
    """The hub's ``/desk`` (GET: the stream; POST: one frame), for the hub's app."""
    from starlette.routing import Route

    door = DeskDoor(hub)
    hub.stopping.append(door.stopping)
    return [Route("/desk", door.stream, methods=["GET"]),
            Route("/desk", door.post, methods=["POST"])]
