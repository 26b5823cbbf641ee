"""``dsh attach``: the human's desk, an inbox of every batch of every ``dsh mcp`` of the user.

Every batch and permission request pending anywhere is an entry of the ``Inbox``
(``desk/inbox.py``); a ``Picker`` (the terminal list, or plain lines) lets the human open
any entry in any order. Opening one tells its server (``desk/opened``), which marks it
taken in every other desk's list; going back to the list without answering (``esc``,
``/cancel``) releases it (``desk/released``), and so does this desk going away, however
it goes (its server sees the socket close). The entry is shown with the question UI, or
the permission prompt, of the same UI (terminal or plain), headed by who asks, and
answered through the batch's own server. An entry the server settles meanwhile (the agent
cancelled, the question timed out, another desk answered) is withdrawn from the screen.
Closing the desk (``ctrl-d``, end of input) sends nothing: every entry stays pending at
its server for the next desk. Dismissing an entry from the list cancels the batch (a
permission request: denied as dismissed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import IO, Any, Literal, Protocol

from dsh_cli.core.errors import (
    ASK_ABORTED,
    ASK_CANCELLED,
    ASK_DECLINED,
    HarnessError,
    format_line,
)
from dsh_cli.core.lines import notice
from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.core.signal import AbortSignal
from dsh_cli.core.tasks import close_task
from dsh_cli.desk.client import DeskClient, DeskScreen, Resolved
from dsh_cli.desk.inbox import Entry, Inbox, InboxChange, entry_kind
from dsh_cli.desk.link import ServerLink
from dsh_cli.desk.protocol import (
    DeskAck,
    DeskAnswer,
    DeskCancel,
    DeskDecision,
    DeskDecline,
    DeskError,
    DeskHello,
    DeskPermissionResolved,
    Encodable,
)
from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction
from dsh_cli.permissions.vocabulary import Hints, PermissionDecision, PermissionRequest

__all__ = ["IDLE", "Desk", "Pick", "Picker", "heading", "last_answers_of"]

IDLE = "nothing pending — waiting for questions · ctrl-d to close"
CLOSED = notice("desk closed; pending questions wait for the next `dsh attach`")



@dataclass(frozen=True)
class Pick:
    """What the human chose in the list: ``open`` or ``dismiss`` an entry, or ``close``."""

    action: Literal["open", "dismiss", "close"]
    entry: Entry | None = None


class Picker(Protocol):
    """The list a human picks from (terminal or plain lines); it follows the inbox live."""

    async def pick(self, inbox: Inbox) -> Pick: ...


def last_answers_of(event: dict[str, Any]) -> dict[str, Any]:
    """The ``last_answers`` a server sent with a batch (question id → labels), checked, each
    with where it came from (``last_answered``) when the server said so."""
    given, where = event.get("last_answers"), event.get("last_answered")
    if not isinstance(given, dict):
        return {}
    where = where if isinstance(where, dict) else {}
    found: dict[str, Any] = {}
    for key, labels in given.items():
        if not isinstance(key, str) or not isinstance(labels, list):
            continue
        chosen = [label for label in labels if isinstance(label, str)]
        origin = where.get(key)
        found[key] = chosen
        if isinstance(origin, dict) and all(isinstance(origin.get(name), str)
                                            for name in ("session_id", "answered_at")):
            found[key] = (chosen, origin["session_id"], origin["answered_at"])
    return found


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
    asks = "asks permission" if entry_kind(event) == "permission" else "asks"
    machine = source.get("machine")
    if isinstance(machine, str) and machine:  # a hub's entry: an agent on some host
        where = sanitize_line(str(source.get("cwd") or "?"))
        return f"── {client} {asks} · {sanitize_line(machine)} · {where}"
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


class Desk(DeskScreen):
    """The inbox of every server's batches and the loop that opens the ones picked."""

    def __init__(self, *, output: IO[str], ask: Asker, picker: Picker,
                 permit: Permitter | None = None,
                 on_arrival: Callable[[Entry], None] | None = None, **links: Any) -> None:
        self.output = output
        self._ask = ask
        self._permit = permit
        self._picker = picker
        self._on_arrival = on_arrival  # the notifications' hook (desk/notify.py)
        self.client = DeskClient(self, report=self.say, **links)
        self.inbox: Inbox = self.client.inbox
        self.current: Entry | None = None
        self._withdrawn = AbortSignal()
        self._answered: set[Any] = set()  # keys answered here, held until they resolve
        self._shown_urls: set[str] = set()
        self.inbox.subscribe(self._on_change)

    def say(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.output.write(line + "\n")
            self.output.flush()

    async def run(self) -> int:
        watching = asyncio.create_task(self.client.run(), name="dsh-desk-scan")
        try:
            while True:
                pick = await self._picker.pick(self.inbox)
                entry = pick.entry
                if pick.action == "close" or entry is None:
                    self.say(CLOSED)
                    return 0
                if entry.key not in self.inbox:
                    self.say(notice(f"entry {entry.number} is no longer pending"))
                elif pick.action == "dismiss":
                    self._dismiss(entry)
                elif not await self._open(entry):
                    self.say(CLOSED)
                    return 0
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching

    def waiting(self, entry: Entry) -> bool:
        """Whether ``entry`` is still pending and not open here (for a late alert): another
        desk's hold does not count, or a desk that stalls with it open would silence this one."""
        return entry.key in self.inbox and entry is not self.current

    async def _open(self, entry: Entry) -> bool:
        """Show one entry, held for this desk; False when the desk was closed meanwhile."""
        self.current, self._withdrawn = entry, AbortSignal()
        entry.opened = True
        # held while open, renewed: a hold the server does not hear renewed lapses
        holding = self.client.hold(entry)
        try:
            self.say("")
            self.say(heading(entry.event))
            if entry.taken:  # allowed: a desk left open elsewhere must not lock a batch
                self.say(notice(f"entry {entry.number} is open at another desk too; "
                                "the first answer counts"))
            if entry.kind == "permission":
                return await self._decide(entry)
            return await self._show(entry)
        finally:
            await close_task(holding)
            self.current = None
            entry.opened = False
            if entry.key in self.inbox and entry.key not in self._answered:
                # back to the list unanswered: every other desk may take it again
                self.client.release(entry)

    async def _show(self, entry: Entry) -> bool:
        """Ask one batch; False when the desk was closed while it was shown."""
        ui = UserInteraction()
        last = last_answers_of(entry.event)
        if last:  # highlighted by the UI, never submitted by it
            ui.recall = lambda request: last
        try:
            request = AskUserQuestionRequest.model_validate(
                {"questions": entry.event.get("questions"), "rpc_id": entry.rpc_id,
                 "declinable": entry.event.get("declinable") is True})
            request.signal = self._withdrawn
            answer = await self._ask(ui, request)
        except HarnessError as error:
            if self._withdrawn.aborted:
                return True  # the question UI's last line says why (and the list's change)
            if error.code == ASK_CANCELLED:
                return True  # back to the list: the entry stays pending, released
            if error.code == ASK_DECLINED:
                self._answer(entry, DeskDecline(rpc_id=entry.rpc_id,
                                                session_id=entry.session_id))
                return True
            if error.code == ASK_ABORTED:
                return False  # input closed: the batch stays pending at its server
            self.say(format_line(error.code, error.message))
            return True
        except Exception as error:  # a batch the desk cannot show: say so, go on
            self.say(notice(f"cannot show {entry.rpc_id}: {error}"))
            return True
        self._answer(entry, DeskAnswer(rpc_id=entry.rpc_id, session_id=entry.session_id,
                                       answers=answer.to_json()["answers"]))
        return True

    def _answer(self, entry: Entry, frame: Encodable) -> None:
        self._answered.add(entry.key)
        entry.link.send(frame)

    async def _decide(self, entry: Entry) -> bool:
        """Show one permission request; its withdrawal at the server takes it off screen."""
        if self._permit is None:
            self.say(notice(f"this desk cannot show permission request {entry.rpc_id}"))
            return True
        deciding = asyncio.ensure_future(self._permit(permission_request(entry.event)))
        withdrawn = asyncio.ensure_future(self._withdrawn.wait())
        try:
            await asyncio.wait({deciding, withdrawn}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            withdrawn.cancel()
        if not deciding.done():
            deciding.cancel(self._withdrawn.reason)  # the prompt's last line says why
            await close_task(deciding)
            return True
        try:
            decision = deciding.result()
        except HarnessError as error:
            if error.code == ASK_ABORTED:
                return False  # input closed: the request stays pending at its server
            if error.code != ASK_CANCELLED:
                self.say(format_line(error.code, error.message))
            return True  # esc: back to the list, the request still pending
        self._answer(entry, DeskDecision(rpc_id=entry.rpc_id, session_id=entry.session_id,
                                         **decision.to_json()))
        return True

    def _dismiss(self, entry: Entry) -> None:
        """Dismissed from the list: a batch is cancelled, a permission request denied; one
        line stays (as an answer's ✓ does)."""
        done = "denied (dismissed)" if entry.kind == "permission" else "dismissed"
        self.say(f"✗ {entry.number}. {done} · {entry.who.agent} · {entry.what}")
        if entry.kind == "permission":
            decision = PermissionDecision("deny", "the user dismissed the permission request")
            self._answer(entry, DeskDecision(rpc_id=entry.rpc_id, session_id=entry.session_id,
                                             **decision.to_json()))
        else:
            self._answer(entry, DeskCancel(rpc_id=entry.rpc_id, session_id=entry.session_id))

    def _on_change(self, change: InboxChange) -> None:
        if change.kind == "removed":
            self._answered.discard(change.entry.key)
            if change.entry is self.current:
                self._withdrawn.abort(change.reason or "settled at the server")

    # -- what the servers say (DeskScreen) ----------------------------------------------

    def hello(self, link: ServerLink, hello: DeskHello) -> None:
        url = hello.web_url
        # a server with its own page (`dsh mcp --web`) says where, once: its stderr is
        # often hidden inside the MCP client
        if url is not None and url not in self._shown_urls:
            self._shown_urls.add(url)
            said = sanitize_line(f"dsh mcp pid {hello.pid} asks in the browser: {url}")
            self.say(notice(said))

    def added(self, entry: Entry) -> None:
        if self._on_arrival is not None:
            self._on_arrival(entry)

    def reason(self, link: ServerLink, event: Resolved) -> str:
        """Why an entry left: answered here, answered at another desk, or what the server
        did (the agent cancelled it, it timed out)."""
        entry = self.inbox.get(link, event.rpc_id)
        here = entry is not None and entry.key in self._answered
        decision = event.decision if isinstance(event, DeskPermissionResolved) else None
        if Outcome.of_event(event.outcome) is Outcome.ANSWERED or decision is not None:
            done = Outcome.ANSWERED.word if decision is None else sanitize_line(decision)
            return f"{done} here" if here else f"{done} at another desk"
        return f"{sanitize_line(str(event.outcome))} at the server"

    def resolved(self, link: ServerLink, event: Resolved, entry: Entry | None) -> None:
        if isinstance(event, DeskPermissionResolved) and str(event.decision).startswith(
                "allow") and event.message is not None:
            # what the server made of an allow (an "always" it could not save)
            self.say(notice(sanitize_line(event.message)))

    def reply(self, link: ServerLink, event: DeskAck | DeskError) -> None:
        if not isinstance(event, DeskAck) or event.accepted:
            return
        said = sanitize_line(str(event.message))  # a peer's words: never escapes
        self.say(notice(f"the server refused the answer: {said}"))
        entry = self.inbox.get(link, event.rpc_id)
        if entry is not None and entry.key in self._answered:
            self._answered.discard(entry.key)  # still pending: others may take it
            if entry is not self.current:
                self.client.release(entry)


def ask_with(provider: Any) -> Asker:
    """An ``Asker`` that shows each batch with ``provider`` through a fresh seam."""

    async def ask(ui: UserInteraction, request: AskUserQuestionRequest) -> Any:
        dispose = ui.register_provider(provider)
        try:
            return await ui.ask(request)
        finally:
            dispose()

    return ask
