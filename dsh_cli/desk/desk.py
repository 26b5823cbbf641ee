"""``dsh attach``: the human's desk, one batch at a time from every ``dsh mcp`` of the user.

Batches are shown in arrival order with the terminal UI (or plain lines), each headed by
who asks. The desk answers through the batch's own server; ``esc`` sends a cancel. A batch
the server settles meanwhile (the agent cancelled, the question timed out, another desk
answered) is withdrawn from the screen. Closing the desk (``ctrl-d``, end of input) sends
nothing: the batch on screen stays pending at its server for the next desk.

Permission requests (``approve_tool_use``) queue with the batches and are shown with the
permission prompt of the same UI (terminal or plain); the decision goes back as a
``permission/decision`` frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from dsh_cli.core.errors import ASK_ABORTED, ASK_CANCELLED, HarnessError, format_line
from dsh_cli.core.lines import notice
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.core.signal import AbortSignal
from dsh_cli.core.tasks import close_task
from dsh_cli.desk.link import DeskLinks, ServerLink
from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction
from dsh_cli.permissions.vocabulary import Hints, PermissionDecision, PermissionRequest

if TYPE_CHECKING:
    from dsh_cli.desk.notify import Focus

__all__ = ["IDLE", "Batch", "Desk", "heading"]

IDLE = "nothing pending — waiting for questions · ctrl-d to close"
CLOSED = notice("desk closed; pending questions wait for the next `dsh attach`")


@dataclass(eq=False)
class Batch:
    """One batch a server asked: its event and the link to answer it through."""

    link: ServerLink
    event: dict[str, Any]
    withdrawn: AbortSignal = field(default_factory=AbortSignal)

    @property
    def rpc_id(self) -> str:
        return str(self.event["rpc_id"])


def _home_relative(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def heading(event: dict[str, Any]) -> str:
    """Who asks: the client's name, the agent's directory, the server process."""
    given = event.get("source")
    source: dict[str, Any] = given if isinstance(given, dict) else {}
    client = sanitize_line(str(source.get("client") or "an MCP client"))
    cwd = sanitize_line(_home_relative(str(source.get("cwd") or "?")))
    pid = sanitize_line(str(source.get("pid") or "?"))
    asks = "asks permission" if event.get("type") == "permission/requested" else "asks"
    return f"── {client} {asks} · {cwd} · dsh mcp pid {pid}"


Asker = Callable[[UserInteraction, AskUserQuestionRequest], Awaitable[Any]]
Permitter = Callable[[PermissionRequest], Awaitable[PermissionDecision]]


def permission_request(event: dict[str, Any]) -> PermissionRequest:
    """The request a ``permission/requested`` event describes, for the prompt to show."""
    given = event.get("hints")
    hints = given if isinstance(given, dict) else {}
    flags = {name: value for name, value in hints.items()
             if name in ("read_only", "destructive", "idempotent", "open_world")
             and isinstance(value, bool)}
    server = event.get("server")
    given = event.get("source")
    source: dict[str, Any] = given if isinstance(given, dict) else {}
    agent, cwd, what = source.get("client"), source.get("cwd"), event.get("description")
    # every request at the desk is another agent's (approve_tool_use): granted per input
    return PermissionRequest(tool=str(event.get("tool") or "?"),
                             arguments=event.get("arguments"),
                             server=server if isinstance(server, str) else None,
                             hints=Hints(**flags), call_id=event.get("call_id"),
                             agent=agent if isinstance(agent, str) else None, scope="input",
                             cwd=cwd if isinstance(cwd, str) else None,
                             description=what if isinstance(what, str) else None)


class Desk:
    """The queue of batches and the loop that shows them; ``ask`` draws one batch."""

    def __init__(self, *, output: IO[str], ask: Asker, idle: Callable[[], Awaitable[bool]],
                 permit: Permitter | None = None,
                 on_arrival: Callable[[Batch], None] | None = None, **links: Any) -> None:
        self.output = output
        self._ask = ask
        self._permit = permit
        self._idle = idle  # waits for input while nothing is pending; False: the desk closes
        self._on_arrival = on_arrival  # the notifications' hook (desk/notify.py)
        self.queue: list[Batch] = []
        self.current: Batch | None = None
        self._arrived = asyncio.Event()
        self._shown_urls: set[str] = set()
        self.links = DeskLinks(self._on_event, self._on_closed, report=self.say, **links)

    def say(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.output.write(line + "\n")
            self.output.flush()

    async def run(self) -> int:
        watching = asyncio.create_task(self.links.run(), name="dsh-desk-scan")
        try:
            while True:
                if not self.queue:
                    self.say(IDLE)
                    if not await self._wait_for_batch():
                        self.say(CLOSED)
                        return 0
                    continue
                batch = self.current = self.queue.pop(0)
                try:
                    if not await self._show(batch):
                        self.say(CLOSED)
                        return 0
                finally:
                    self.current = None
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching

    async def _wait_for_batch(self) -> bool:
        """Until a batch arrives (True) or the human closes the desk (False)."""
        self._arrived.clear()
        arrived = asyncio.ensure_future(self._arrived.wait())
        idle = asyncio.ensure_future(self._idle())
        try:
            await asyncio.wait({arrived, idle}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (arrived, idle):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await idle
        closed = idle.done() and not idle.cancelled() and idle.exception() is None \
            and idle.result() is False
        return not closed

    async def _show(self, batch: Batch) -> bool:
        """Ask one batch; False when the desk was closed while it was shown."""
        self.say("")
        self.say(heading(batch.event))
        if batch.event["type"] == "permission/requested":
            return await self._decide(batch)
        ui = UserInteraction()
        last = batch.event.get("last_answers")
        if isinstance(last, dict):  # the server's store: the last answer is highlighted
            ui.recall = lambda _request: last
        try:
            request = AskUserQuestionRequest.model_validate(
                {"questions": batch.event.get("questions"), "rpc_id": batch.rpc_id})
            request.signal = batch.withdrawn
            answer = await self._ask(ui, request)
        except HarnessError as error:
            if batch.withdrawn.aborted:
                self.say(f"(withdrawn: {batch.withdrawn.reason})")
                return True
            if error.code == ASK_CANCELLED:
                batch.link.send({"type": "question/cancel", "rpc_id": batch.rpc_id,
                                 "session_id": batch.event.get("session_id")})
                return True
            if error.code == ASK_ABORTED:
                return False  # input closed: the batch stays pending at its server
            self.say(format_line(error.code, error.message))
            return True
        except Exception as error:  # a batch the desk cannot show: say so, go on
            self.say(notice(f"cannot show {batch.rpc_id}: {error}"))
            return True
        batch.link.send({"type": "question/answer", "rpc_id": batch.rpc_id,
                         "session_id": batch.event.get("session_id"),
                         "answers": answer.to_json()["answers"]})
        return True

    async def _decide(self, batch: Batch) -> bool:
        """Show one permission request; its withdrawal at the server takes it off screen."""
        if self._permit is None:
            self.say(notice(f"this desk cannot show permission request {batch.rpc_id}"))
            return True
        deciding = asyncio.ensure_future(self._permit(permission_request(batch.event)))
        withdrawn = asyncio.ensure_future(batch.withdrawn.wait())
        try:
            await asyncio.wait({deciding, withdrawn}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            withdrawn.cancel()
        if not deciding.done():
            await close_task(deciding)
            self.say(f"(withdrawn: {batch.withdrawn.reason})")
            return True
        try:
            decision = deciding.result()
        except HarnessError as error:
            if error.code == ASK_ABORTED:
                return False  # input closed: the request stays pending at its server
            if error.code != ASK_CANCELLED:
                self.say(format_line(error.code, error.message))
                return True
            # dismissed: nothing would ever show it again here, so the agent hears no
            decision = PermissionDecision("deny", "the user dismissed the permission request")
        batch.link.send({"type": "permission/decision", "rpc_id": batch.rpc_id,
                         "session_id": batch.event.get("session_id"), **decision.to_json()})
        return True

    def _on_event(self, link: ServerLink, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "desk/hello":
            url = event.get("web_url")
            # a server with its own page (`dsh mcp --web`) says where, once: its stderr is
            # often hidden inside the MCP client
            if isinstance(url, str) and url not in self._shown_urls:
                self._shown_urls.add(url)
                self.say(notice(f"dsh mcp pid {event.get('pid')} asks in the browser: {url}"))
        elif kind in ("question/requested", "permission/requested") \
                and isinstance(event.get("rpc_id"), str):
            if not self._known(link, event["rpc_id"]):
                batch = Batch(link, event)
                self.queue.append(batch)
                self._arrived.set()
                if self._on_arrival is not None:
                    self._on_arrival(batch)
        elif kind == "permission/resolved":
            self._withdraw(link, event.get("rpc_id"),
                           f"{event.get('decision') or event.get('outcome')} at the server")
            message = event.get("message")
            if str(event.get("decision")).startswith("allow") and isinstance(message, str):
                # what the server made of an allow (an "always" it could not save)
                self.say(notice(sanitize_line(message)))
        elif kind == "question/resolved":
            self._withdraw(link, event.get("rpc_id"), f"{event.get('outcome')} at the server")
        elif kind == "response/ack" and not event.get("accepted"):
            self.say(notice(f"the server refused the answer: {event.get('message')}"))

    def waiting(self, batch: Batch) -> bool:
        """Whether ``batch`` is still unanswered here (queued or on screen)."""
        return batch is self.current or any(b is batch for b in self.queue)

    def _known(self, link: ServerLink, rpc_id: str) -> bool:
        batches = [*self.queue, *([self.current] if self.current else [])]
        return any(b.link is link and b.rpc_id == rpc_id for b in batches)

    def _withdraw(self, link: ServerLink, rpc_id: Any, reason: str) -> None:
        self.queue = [b for b in self.queue if not (b.link is link and b.rpc_id == rpc_id)]
        current = self.current
        if current is not None and current.link is link and current.rpc_id == rpc_id:
            current.withdrawn.abort(reason)

    def _on_closed(self, link: ServerLink) -> None:
        self.queue = [b for b in self.queue if b.link is not link]
        if self.current is not None and self.current.link is link:
            self.current.withdrawn.abort("its dsh mcp went away")


def ask_with(provider: Any) -> Asker:
    """An ``Asker`` that shows each batch with ``provider`` through a fresh seam."""

    async def ask(ui: UserInteraction, request: AskUserQuestionRequest) -> Any:
        dispose = ui.register_provider(provider)
        try:
            return await ui.ask(request)
        finally:
            dispose()

    return ask


def stdin_closed_waiter(read: Callable[[], Awaitable[str | None]]) -> Callable[[], Awaitable[bool]]:
    """Idle input from a line source: False at end of input; lines while idle are ignored."""

    async def idle() -> bool:
        while True:
            line = await read()
            if line is None:
                return False

    return idle


async def tty_idle(fd: int | None = None, focus: Focus | None = None) -> bool:
    """Idle on a terminal: no echo, one key at a time; ``ctrl-d`` closes (False). With
    ``focus``, focus reporting is on while idle and ``focus`` learns the reports."""
    import termios
    import tty

    from dsh_cli.desk.notify import FOCUS_OFF, FOCUS_ON

    fd = sys.stdin.fileno() if fd is None else fd
    loop = asyncio.get_running_loop()
    saved = termios.tcgetattr(fd)
    closed: asyncio.Future[bool] = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, 1024)
        except OSError:
            data = b""
        if focus is not None and data:
            data = focus.feed(data) or b" "  # a report alone is input, not the end of it
        if (not data or b"\x04" in data) and not closed.done():
            closed.set_result(False)

    tty.setcbreak(fd, termios.TCSANOW)
    new = termios.tcgetattr(fd)
    new[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, new)
    loop.add_reader(fd, readable)
    # only while idle: a question's own UI would read the reports as keys
    _focus_reporting(focus is not None, FOCUS_ON)
    try:
        return await closed
    finally:
        loop.remove_reader(fd)
        _focus_reporting(focus is not None, FOCUS_OFF)
        if focus is not None:
            focus.focused = None  # not known again until the next report
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def _focus_reporting(on: bool, sequence: str) -> None:
    if on:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(sequence)
            sys.stdout.flush()
