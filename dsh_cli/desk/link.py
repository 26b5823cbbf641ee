"""The desk's side of the channel: links to every ``dsh mcp`` in the runtime directory.

``DeskLinks`` scans the directory (and keeps watching it), connects to each live server,
removes a socket nobody listens on any more (connection refused: its server was killed),
refuses a server of another uid, and asks each new server to replay its pending batches.
Every batch and permission request read is acknowledged at once (``desk/taken``): a server
counts this desk only while it does, so a desk that is stopped never holds an agent up.
Each line a server writes reaches ``on_event(link, event)``; a server that goes away
reaches ``on_closed(link)``.

What the desk holds is bounded by bytes: the lines of the batches and permission requests
pending here, all servers together, weigh at most ``DESK_HELD_BYTES``. One that would take
the desk past it is not held (nor shown): the desk answers ``desk/full`` instead of
``desk/taken``, with a message the server hands the agent, and says so in one line.

An entry held open (``desk/opened``) is a lease the server lets go unless renewed
(``hold_seconds`` in its hello): ``hold`` renews it until cancelled.

Every line is read and written through the desk protocol (``desk/protocol.py``): a server's
line is one typed event (a line that is not one is skipped), a frame is encoded once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from dsh_cli.core.limits import DESK_HELD_BYTES
from dsh_cli.core.limits import DESK_LINE_BYTES as MAX_LINE
from dsh_cli.core.lines import notice
from dsh_cli.desk.channel import PeerRefused, check_peer, peer_uid, runtime_dir, server_sockets
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskFull,
    DeskHello,
    DeskOpened,
    DeskPermissionRequested,
    DeskPermissionResolved,
    DeskQuestionRequested,
    DeskQuestionResolved,
    DeskReplay,
    DeskTaken,
    Encodable,
    Wire,
    encode,
    prepare,
    read_event,
)

__all__ = ["QUEUED_LINES", "SCAN_INTERVAL", "DeskLinks", "QueuedLink", "ServerLink", "hold"]

TAKEN = (DeskQuestionRequested, DeskPermissionRequested)
RESOLVED = (DeskQuestionResolved, DeskPermissionResolved)
MIB = 1024 * 1024
SCAN_INTERVAL = 0.25  # seconds between looks at the runtime directory for new servers
QUEUED_LINES = 4  # a socketless link's lines read ahead of the desk: its reader waits past it


class ServerLink:
    """One connected server: its hello (pid, cwd, web URL) and a way to send it frames."""

    def __init__(self, path: Path, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.path = path
        self.hello = DeskHello()  # until the server's own comes
        self.line_bytes = 0  # the size of the line the last event came in
        self._reader = reader
        self._writer = writer

    @property
    def pid(self) -> int | None:
        return self.hello.pid

    @property
    def hold_seconds(self) -> float | None:
        """How long a hold lasts at this server unrenewed (None: for ever, an older one)."""
        given = self.hello.hold_seconds
        return None if given is None else float(given)

    @property
    def closed(self) -> bool:
        """True once the link is closed (its server went away, or the desk is closing)."""
        return self._writer.is_closing()

    def send(self, frame: Encodable) -> None:
        """One frame as one line; a server that went away just loses it."""
        self.send_line(encode(frame))

    def send_line(self, line: bytes) -> None:
        """One line made by ``protocol.encode``; a server that went away just loses it."""
        if self._writer.is_closing():
            return
        with contextlib.suppress(OSError, RuntimeError):
            self._writer.write(line)

    async def read_event(self) -> Wire | None:
        """The next event; None when the server hung up. Lines that are none are skipped."""
        while True:
            try:
                line = await self._reader.readline()
            except (OSError, ValueError):
                return None
            if not line:
                return None
            self.line_bytes = len(line)
            try:
                return read_event(line)
            except BadFrame:
                continue

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self._writer.close()


class QueuedLink(ServerLink):
    """A link with no socket (a hub's ``/desk`` stream, one read in this process): its
    events are lines a reader of its own puts on a bounded queue, then an end mark."""

    def __init__(self, path: Path) -> None:
        # not ServerLink.__init__: no socket; the fields every desk reads are set here
        self.path = path
        self.hello = DeskHello()  # until the stream's own comes
        self.line_bytes = 0
        self._lines: asyncio.Queue[bytes] = asyncio.Queue(QUEUED_LINES)

    def send(self, frame: Encodable) -> None:
        """One frame, in turn; ``desk/taken`` and ``questions/replay`` never are (the
        stream alone says what is pending and who holds it)."""
        if isinstance(frame, DeskTaken | DeskReplay):
            return
        self.send_line(encode(frame))

    async def read_event(self) -> Wire | None:
        """The next event (the stream's, or a frame's reply); None once closed and drained."""
        while True:
            if self.closed and self._lines.empty():
                return None  # what was read before the end has been taken
            line = await self._lines.get()
            if not line.strip():  # the end mark (then looked at above), or a heartbeat
                continue
            self.line_bytes = len(line)
            try:
                event = read_event(line)
            except BadFrame:
                continue
            if isinstance(event, DeskHello):
                self.hello = event
            return event


def hold(link: ServerLink, rpc_id: str) -> asyncio.Task[None]:
    """Hold ``rpc_id`` open at its server (``desk/opened`` now), renewed three times a lease
    until the task is cancelled; the caller then releases it (``desk/released``)."""
    link.send(DeskOpened(rpc_id=rpc_id))

    async def renew() -> None:
        lease = link.hold_seconds
        if lease is None:  # a server whose holds never lapse: once is enough
            return
        while True:
            await asyncio.sleep(lease / 3)
            link.send(DeskOpened(rpc_id=rpc_id))

    return asyncio.ensure_future(renew())


class DeskLinks:
    """Every live server of this user, found and followed; ``run`` until cancelled."""

    def __init__(self, on_event: Callable[[ServerLink, Wire], None],
                 on_closed: Callable[[ServerLink], None], *,
                 directory: Path | None = None,
                 report: Callable[[str], None] | None = None,
                 held_limit: int = DESK_HELD_BYTES) -> None:
        self.directory = directory or runtime_dir()
        self.held_limit = held_limit
        self.held = 0  # bytes of the lines of what is pending here, all servers together
        self._weights: dict[tuple[ServerLink, str], int] = {}
        self._said_full: set[tuple[ServerLink, str]] = set()  # until each resolves
        self.links: dict[Path, ServerLink] = {}
        self._on_event = on_event
        self._on_closed = on_closed
        self._report = report or (lambda line: None)
        self._refused: set[Path] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        prepare()  # before any server is linked: its first batch waits for nothing
        try:
            while True:
                await self.scan()
                await asyncio.sleep(SCAN_INTERVAL)
        finally:
            for task in list(self._tasks):
                task.cancel()
            for link in list(self.links.values()):
                link.close()

    async def scan(self) -> None:
        """Connect to every server socket not yet linked; clean up the stale ones."""
        for path in server_sockets(self.directory):
            if path in self.links or path in self._refused:
                continue
            link = await self._connect(path)
            if link is not None:
                self.links[path] = link
                task = asyncio.create_task(self._follow(link), name="dsh-desk-link")
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _connect(self, path: Path) -> ServerLink | None:
        try:
            reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE)
        except ConnectionRefusedError:
            with contextlib.suppress(OSError):
                path.unlink()  # left behind by a server that was killed
            return None
        except OSError:
            return None  # gone meanwhile, or not ours to open
        try:
            check_peer(peer_uid(writer.get_extra_info("socket")))
        except PeerRefused as refused:
            self._report(notice(f"{refused} at {path}"))
            self._refused.add(path)
            writer.close()
            return None
        link = ServerLink(path, reader, writer)
        link.send(DeskReplay())
        return link

    async def _follow(self, link: ServerLink) -> None:
        try:
            while True:
                event = await link.read_event()
                if event is None:
                    break
                if isinstance(event, DeskHello):
                    link.hello = event
                elif isinstance(event, TAKEN):
                    if not self._hold(link, event.rpc_id):
                        continue
                    link.send(DeskTaken(rpc_id=event.rpc_id))
                elif isinstance(event, RESOLVED):
                    self.held -= self._weights.pop((link, event.rpc_id), 0)
                    if (link, event.rpc_id) in self._said_full:
                        self._said_full.discard((link, event.rpc_id))
                        continue  # never shown here, so nothing to withdraw
                self._on_event(link, event)
        finally:
            self.links.pop(link.path, None)
            for key in [key for key in self._weights if key[0] is link]:
                self.held -= self._weights.pop(key)
            self._said_full = {key for key in self._said_full if key[0] is not link}
            link.close()
            self._on_closed(link)

    def _hold(self, link: ServerLink, rpc_id: str) -> bool:
        """Weigh what ``link`` asks under ``rpc_id``; False (and ``desk/full`` said) when it
        would take the desk past ``held_limit``."""
        if (link, rpc_id) in self._weights:
            return True  # a replay of what is held already
        size = link.line_bytes
        if self.held + size > self.held_limit:
            message = (f"the dsh desk holds {self.held / MIB:.1f} MiB of pending questions "
                       f"already (at most {self.held_limit / MIB:.1f} MiB), so it did not take "
                       f"this one of {size / MIB:.1f} MiB: wait for answers, or ask a smaller "
                       "batch")
            link.send(DeskFull(rpc_id=rpc_id, message=message))
            self._said_full.add((link, rpc_id))
            self._report(notice(f"not shown: dsh mcp pid {link.pid} asked {size / MIB:.1f} "
                                f"MiB more than the desk holds ({self.held_limit / MIB:.0f} "
                                "MiB at most)"))
            return False
        self._weights[(link, rpc_id)] = size
        self.held += size
        return True
