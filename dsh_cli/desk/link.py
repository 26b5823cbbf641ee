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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dsh_cli.core.json_lines import json_line
from dsh_cli.core.limits import DESK_HELD_BYTES
from dsh_cli.core.limits import DESK_LINE_BYTES as MAX_LINE
from dsh_cli.core.lines import notice
from dsh_cli.desk.channel import PeerRefused, check_peer, peer_uid, runtime_dir, server_sockets

__all__ = ["SCAN_INTERVAL", "DeskLinks", "ServerLink", "frame_line", "hold"]

TAKEN = frozenset({"question/requested", "permission/requested"})
RESOLVED = frozenset({"question/resolved", "permission/resolved"})
MIB = 1024 * 1024
SCAN_INTERVAL = 0.25  # seconds between looks at the runtime directory for new servers


def frame_line(frame: dict[str, Any]) -> bytes:
    """One frame as the UTF-8 line a server reads (not ASCII-escaped: a ``\\ud83d\\ude00``
    pair is 12 bytes for a 4-byte emoji, and an answer within its characters' cap would
    outgrow the server's ``FRAME_BYTES``)."""
    return json_line(frame).encode("utf-8")


class ServerLink:
    """One connected server: its hello (pid, cwd, web URL) and a way to send it frames."""

    def __init__(self, path: Path, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.path = path
        self.hello: dict[str, Any] = {}
        self.line_bytes = 0  # the size of the line the last event came in
        self._reader = reader
        self._writer = writer

    @property
    def pid(self) -> int | None:
        return self.hello.get("pid")

    @property
    def hold_seconds(self) -> float | None:
        """How long a hold lasts at this server unrenewed (None: for ever, an older one)."""
        given = self.hello.get("hold_seconds")
        return float(given) if isinstance(given, int | float) and not isinstance(given, bool) \
            and given > 0 else None

    @property
    def closed(self) -> bool:
        """True once the link is closed (its server went away, or the desk is closing)."""
        return self._writer.is_closing()

    def send(self, frame: dict[str, Any]) -> None:
        """One frame as one line; a server that went away just loses it."""
        self.send_line(frame_line(frame))

    def send_line(self, line: bytes) -> None:
        """One line made by ``frame_line``; a server that went away just loses it."""
        if self._writer.is_closing():
            return
        with contextlib.suppress(OSError, RuntimeError):
            self._writer.write(line)

    async def read_event(self) -> dict[str, Any] | None:
        """The next event object; None when the server hung up. Garbage lines are skipped."""
        while True:
            try:
                line = await self._reader.readline()
            except (OSError, ValueError):
                return None
            if not line:
                return None
            self.line_bytes = len(line)
            try:
                event = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                continue
            if isinstance(event, dict) and isinstance(event.get("type"), str):
                return event

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self._writer.close()


def hold(link: ServerLink, rpc_id: str) -> asyncio.Task[None]:
    """Hold ``rpc_id`` open at its server (``desk/opened`` now), renewed three times a lease
    until the task is cancelled; the caller then releases it (``desk/released``)."""
    link.send({"type": "desk/opened", "rpc_id": rpc_id})

    async def renew() -> None:
        lease = link.hold_seconds
        if lease is None:  # a server whose holds never lapse: once is enough
            return
        while True:
            await asyncio.sleep(lease / 3)
            link.send({"type": "desk/opened", "rpc_id": rpc_id})

    return asyncio.ensure_future(renew())


class DeskLinks:
    """Every live server of this user, found and followed; ``run`` until cancelled."""

    def __init__(self, on_event: Callable[[ServerLink, dict[str, Any]], None],
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
        link.send({"type": "questions/replay"})
        return link

    async def _follow(self, link: ServerLink) -> None:
        try:
            while True:
                event = await link.read_event()
                if event is None:
                    break
                if event["type"] == "desk/hello":
                    link.hello = event
                elif event["type"] in TAKEN and isinstance(event.get("rpc_id"), str):
                    if not self._hold(link, event["rpc_id"]):
                        continue
                    link.send({"type": "desk/taken", "rpc_id": event["rpc_id"]})
                elif event["type"] in RESOLVED and isinstance(event.get("rpc_id"), str):
                    self.held -= self._weights.pop((link, event["rpc_id"]), 0)
                    if (link, event["rpc_id"]) in self._said_full:
                        self._said_full.discard((link, event["rpc_id"]))
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
            link.send({"type": "desk/full", "rpc_id": rpc_id, "message": message})
            self._said_full.add((link, rpc_id))
            self._report(notice(f"not shown: dsh mcp pid {link.pid} asked {size / MIB:.1f} "
                                f"MiB more than the desk holds ({self.held_limit / MIB:.0f} "
                                "MiB at most)"))
            return False
        self._weights[(link, rpc_id)] = size
        self.held += size
        return True
