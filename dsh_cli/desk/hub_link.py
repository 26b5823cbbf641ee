"""The desk's link to a hub (``dsh attach --hub URL``): the desk protocol over HTTP.

``HubLink`` is a ``ServerLink`` whose lines travel over two kinds of request to the hub's
``/desk`` (``hub/desks.py``), each with the human's token: the lines of one long
``GET /desk`` are the events, and each frame the desk sends is one ``POST /desk`` whose
reply lines (an answer's ``response/ack``, an ``error``) join the same events, so every
desk (terminal, plain, ``--jsonl``, web) reads a hub as it reads a ``dsh mcp``. The POSTs
go one at a time, in the order sent, naming the stream (``X-Dsh-Desk``: the hello's
``connection``), so the hub knows which claims are this desk's. Two frames are never sent:
``desk/taken`` (a hub's entry waits in its store for any human: there is no desk to count)
and ``questions/replay`` (the hub's stream re-reads the store itself whenever it may have
missed a change; a replay's reply, read beside the stream, could announce again an entry
the stream had already withdrawn). For the same reason only acks and errors are taken
from a reply: the stream alone says what is pending and who holds it.

``HubLinks`` keeps one such link up: when the hub goes away (the stream ends, or stays
silent past ``SILENT_SECONDS`` though the hub writes a heartbeat every 15 s) its entries
leave the inbox as a server's do when it goes, the desk says so in one line, and the link
is made again with back-off (``FIRST_RETRY`` doubling to ``LAST_RETRY``); the hub's stream
then lists them again. What the desk holds is bounded as for servers (``DeskLinks``): the
desk's own ``DESK_HELD_BYTES``, lines of at most ``DESK_LINE_BYTES``, a few lines queued.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dsh_cli.core.errors import HUB_UNREACHABLE
from dsh_cli.core.limits import DESK_HELD_BYTES, DESK_LINE_BYTES, FRAME_BYTES
from dsh_cli.core.lines import notice
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.desk.link import DeskLinks, QueuedLink, ServerLink
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskAck,
    DeskError,
    Wire,
    encode,
    prepare,
    read_event,
)

if TYPE_CHECKING:
    import httpx2

__all__ = ["FIRST_RETRY", "HUB_GONE", "LAST_RETRY", "SILENT_SECONDS", "HubAddress", "HubLink",
           "HubLinks", "desk_url"]

HUB_GONE = "the hub went away"
FIRST_RETRY = 0.25  # seconds before the first attempt to reach a hub that went away
LAST_RETRY = 10.0  # the back-off doubles up to this
SILENT_SECONDS = 60.0  # a stream with no line this long is dead (the hub writes every 15 s)
CONNECT_SECONDS = 10.0
QUEUED_FRAMES = 256  # frames waiting to be POSTed; past it the hub is not keeping up
QUEUED_BYTES = 4 * FRAME_BYTES  # and their bytes, whatever their number
CONNECTION_HEADER = "X-Dsh-Desk"
_END = b""  # the queue's mark: the stream ended


@dataclass(frozen=True)
class HubAddress:
    """A hub's ``/desk`` and the human token that opens it (never shown)."""

    url: str  # the /desk URL
    token: str = field(repr=False)
    where: str  # host[:port], for messages

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def desk_url(base: str) -> str:
    """The ``/desk`` of a hub given by its base URL (or by its ``/desk`` already)."""
    trimmed = base.rstrip("/")
    return trimmed if trimmed.endswith("/desk") else trimmed + "/desk"


class HubLink(QueuedLink):
    """One ``GET /desk`` stream and the POSTs beside it, as a ``ServerLink``."""

    def __init__(self, address: HubAddress, client: httpx2.AsyncClient,
                 response: httpx2.Response, report: Callable[[str], None]) -> None:
        super().__init__(Path(address.where))
        self.address = address
        self._client = client
        self._response = response
        self._report = report
        self._frames: asyncio.Queue[bytes] = asyncio.Queue(QUEUED_FRAMES)
        self._queued = 0  # bytes of the frames waiting
        self._closed = False  # closed by the desk
        self._ended = False  # the stream ended (the hub went away)
        self._reading = asyncio.ensure_future(self._read())
        self._posting = asyncio.ensure_future(self._post())

    @property
    def closed(self) -> bool:
        return self._closed or self._ended

    def send_line(self, line: bytes) -> None:
        """One line made by ``protocol.encode``, POSTed in turn; a hub gone loses it."""
        if self.closed:
            return
        try:
            if self._queued + len(line) > QUEUED_BYTES:
                raise asyncio.QueueFull
            self._frames.put_nowait(line)
            self._queued += len(line)
        except asyncio.QueueFull:
            self._report(notice(f"the hub at {self.address.where} is not taking frames: "
                                "one was dropped"))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._reading.cancel()
        self._posting.cancel()
        with contextlib.suppress(asyncio.QueueFull):
            self._lines.put_nowait(_END)

    async def aclose(self) -> None:
        """Close, and wait for the stream's request to be let go."""
        self.close()
        for task in (self._reading, self._posting):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            await self._response.aclose()

    async def _read(self) -> None:
        """The stream's lines into the queue, each at most ``DESK_LINE_BYTES`` (a longer one
        is skipped to its end, and said once); the end mark when the stream ends."""
        import httpx2

        partial = bytearray()
        skipping = False
        try:
            async for chunk in self._response.aiter_raw():
                while chunk:
                    cut = chunk.find(b"\n")
                    piece, chunk = (chunk, b"") if cut < 0 else (chunk[:cut + 1], chunk[cut + 1:])
                    if not skipping:
                        partial += piece
                    if len(partial) > DESK_LINE_BYTES:
                        if not skipping:
                            self._report(notice(f"skipped a line over {DESK_LINE_BYTES} bytes "
                                                f"from the hub at {self.address.where}"))
                        partial.clear()
                        skipping = True
                    if cut >= 0:
                        if not skipping:
                            await self._lines.put(bytes(partial))
                        partial.clear()
                        skipping = False
        except (httpx2.HTTPError, OSError):
            pass  # the hub went away: as the end of the stream
        finally:
            self._ended = True
            with contextlib.suppress(asyncio.QueueFull):
                self._lines.put_nowait(_END)

    async def _post(self) -> None:
        """Each queued frame as one POST, in order; its acks and errors into the events."""
        while True:
            line = await self._frames.get()
            self._queued -= len(line)
            replies = await self._deliver(line)
            for reply in replies:
                await self._lines.put(reply)

    async def _deliver(self, line: bytes) -> list[bytes]:
        """One POST: the reply lines a desk takes from it (acks and errors), or an error of
        our own when the hub did not take the frame."""
        import httpx2

        headers = {**self.address.headers, "Content-Type": "application/x-ndjson"}
        connection = (self.hello.model_extra or {}).get("connection")
        if isinstance(connection, str):  # the claims it makes are this stream's
            headers[CONNECTION_HEADER] = connection
        why: str
        try:
            async with self._client.stream("POST", self.address.url, content=line,
                                           headers=headers) as response:
                if response.status_code == 200:
                    return await _reply_lines(response)
                said = await _short_body(response)
                why = f"HTTP {response.status_code}{': ' + said if said else ''}"
        except (httpx2.HTTPError, OSError) as error:
            why = type(error).__name__
        message = sanitize_line(f"the hub at {self.address.where} did not take the frame "
                                f"({why})")
        self._report(notice(message))
        return [encode(DeskError(code=HUB_UNREACHABLE, message=message))]


async def _reply_lines(response: httpx2.Response) -> list[bytes]:
    """The acks and errors of a POST's reply (at most ``FRAME_BYTES`` of it is read)."""
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += chunk
        if len(body) > FRAME_BYTES:
            break
    kept = []
    for line in bytes(body[:FRAME_BYTES]).splitlines(keepends=True):
        try:
            event = read_event(line)
        except BadFrame:
            continue
        if isinstance(event, DeskAck | DeskError):
            kept.append(line if line.endswith(b"\n") else line + b"\n")
    return kept


async def _short_body(response: httpx2.Response) -> str:
    """The first line of a refusal's body, cut short and safe (the hub says why in one)."""
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += chunk
        if len(body) > 500:
            break
    text = bytes(body[:500]).decode("utf-8", "replace").strip().splitlines()
    return sanitize_line(text[0][:200]) if text else ""


class HubLinks(DeskLinks):
    """One hub's link kept up (made again with back-off), in place of the directory's
    servers; ``run`` until cancelled."""

    def __init__(self, on_event: Callable[[ServerLink, Wire], None],
                 on_closed: Callable[[ServerLink], None], *, hub: HubAddress,
                 report: Callable[[str], None] | None = None,
                 held_limit: int = DESK_HELD_BYTES, directory: Path | None = None) -> None:
        # ``directory`` is the servers' (a desk passes its own, None): the hub stands in
        # for every one of them, so it is not scanned
        super().__init__(on_event, on_closed, directory=directory or Path("/"),
                         report=report, held_limit=held_limit)
        self.hub = hub
        self._refusal: int | None = None  # the status of the refusal last said (once each)

    async def run(self) -> None:
        import httpx2

        prepare()
        timeout = httpx2.Timeout(CONNECT_SECONDS, read=SILENT_SECONDS)
        async with httpx2.AsyncClient(timeout=timeout) as client:
            delay, lost = FIRST_RETRY, False
            try:
                while True:
                    link = await self._connect_hub(client, quiet=lost)
                    if link is None:
                        lost = True
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, LAST_RETRY)
                        continue
                    if lost:
                        self._report(notice(f"the hub at {self.hub.where} is back"))
                    delay, lost = FIRST_RETRY, False
                    self.links[link.path] = link
                    try:
                        await self._follow(link)
                    finally:
                        await link.aclose()
                    self._report(notice(f"{HUB_GONE} ({self.hub.where}): its entries are off "
                                        "the list until it is back; trying again"))
                    lost = True
            finally:
                for linked in list(self.links.values()):
                    if isinstance(linked, HubLink):
                        await linked.aclose()

    async def scan(self) -> None:
        """Nothing to scan: the one hub is linked by ``run``."""

    async def _connect_hub(self, client: httpx2.AsyncClient, *, quiet: bool) -> HubLink | None:
        """The stream opened (its status 200), or None when the hub cannot be reached (said
        in one line unless ``quiet``: the hub is known to be away) or refused it (said once
        for each status in a row: a hub that ended the stream of a human whose token was
        removed then refuses the desk, which "trying again" alone would hide)."""
        import httpx2

        request = client.build_request("GET", self.hub.url, headers=self.hub.headers)
        try:
            response = await client.send(request, stream=True)
        except (httpx2.HTTPError, OSError) as error:
            if not quiet:
                self._report(notice(f"cannot reach the hub at {self.hub.where} "
                                    f"({type(error).__name__}); trying again"))
            return None
        if response.status_code != 200:
            said = await _short_body(response)
            await response.aclose()
            if response.status_code != self._refusal:
                self._refusal = response.status_code
                self._report(notice(f"the hub at {self.hub.where} refused the desk (HTTP "
                                    f"{response.status_code}{': ' + said if said else ''})"))
            return None
        self._refusal = None
        return HubLink(self.hub, client, response, self._report)
