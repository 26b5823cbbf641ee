"""The inbox: every batch pending at every ``dsh mcp`` of the user, as one list (no UI).

An ``Entry`` is one batch or permission request, keyed by ``(link, rpc_id)`` (``link`` is
the desk's connection to the server that asked; two servers may mint the same ``rpc_id``).
It knows who asks (the agent, its working directory, the server's pid, for a form the MCP
server), what (the first question's header and text, or the tool), when it arrived, its
kind (``question``, ``permission``, ``form``) and whether another desk has it open.

Every entry gets a ``number`` at arrival: the one its server gives it (one counter for
every ``dsh mcp`` of the user, so the entry has the same number at every desk and after a
desk restarts), else the desk's own, counting up; never reused while the desk runs: the
plain inbox opens entry N by that number, and a number read a moment ago never names
another entry. ``Inbox`` keeps the entries in arrival order in a dict (add,
remove and mark are O(1)); ``entries()`` is a snapshot list rebuilt only after a change,
so a UI moving a cursor over 500 entries does no work per key that grows with the list.
The list puts what blocks an agent first: questions it waits for and permission requests,
then async batches (``delivery: async``), each part in arrival order, so one agent's 300
async batches never push another's waiting question off the screen.
Each change reaches the listeners as an ``InboxChange`` (``added``, ``removed``, ``taken``,
``free``), in the order it happened: the terminal list, the plain lines, the ``--jsonl``
events, the notifications and the web desk all read the same stream.

Everything an entry shows is made here once, sanitised and bounded (``core/sanitize.py``):
a server's text never reaches a screen unsanitised, however it is drawn.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from dsh_cli.core.sanitize import escape_invisible
from dsh_cli.core.sanitize import one_line as _cut
from dsh_cli.desk.protocol import asks_permission
from dsh_cli.desk.summary import first_question

__all__ = ["KINDS", "Entry", "EntryKey", "Inbox", "InboxChange", "Who", "age_text",
           "age_until", "entry_kind", "summary_of", "who_of"]

Kind = Literal["question", "permission", "form"]
KINDS: tuple[Kind, ...] = ("question", "permission", "form")
ChangeKind = Literal["added", "removed", "taken", "free"]
EntryKey = tuple[Hashable, str]  # (the server link, the batch's rpc_id)

WHAT_CHARACTERS = 160  # what an entry shows of its first question
WHO_CHARACTERS = 80  # of the agent's and the server's names
CWD_CHARACTERS = 120  # of the agent's directory


def _home_relative(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


@dataclass(frozen=True)
class Who:
    """Who asks an entry: the agent, its directory, its ``dsh mcp``, a form's MCP server."""

    agent: str
    cwd: str
    pid: int | None
    server: str | None = None  # the MCP server whose form this is (kind ``form``)
    machine: str | None = None  # the agent's host, when a hub says (no pid of ours then)

    def line(self) -> str:
        """``agent · cwd · pid N`` (``agent via server`` for a form; ``agent · machine ·
        cwd`` for a hub's entry), already safe."""
        name = f"{self.agent} via {self.server}" if self.server else self.agent
        if self.machine is not None:
            return f"{name} · {self.machine} · {self.cwd}"
        pid = f"pid {self.pid}" if self.pid is not None else "pid ?"
        return f"{name} · {self.cwd} · {pid}"


def _source(event: Mapping[str, Any]) -> Mapping[str, Any]:
    given = event.get("source")
    return given if isinstance(given, Mapping) else {}


def who_of(event: Mapping[str, Any]) -> Who:
    """Who asks, from a ``question/requested`` or ``permission/requested`` event's ``source``."""
    source = _source(event)
    pid = source.get("pid")
    server = source.get("server")
    machine = source.get("machine")
    machine = _cut(machine, WHO_CHARACTERS) if isinstance(machine, str) and machine else None
    cwd = str(source.get("cwd") or "?")
    return Who(agent=_cut(str(source.get("client") or "an MCP client"), WHO_CHARACTERS),
               # another machine's directory is not under this one's home
               cwd=_cut(cwd if machine is not None else _home_relative(cwd), CWD_CHARACTERS),
               pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
               server=_cut(server, WHO_CHARACTERS) if isinstance(server, str) and server
               else None, machine=machine)


def entry_kind(event: Mapping[str, Any]) -> Kind:
    """``permission`` for a permission request; ``form`` for an MCP server's form (a
    declinable batch, or one that names its server); else ``question``."""
    if asks_permission(event):
        return "permission"
    if event.get("declinable") is True or isinstance(_source(event).get("server"), str):
        return "form"
    return "question"


def summary_of(event: Mapping[str, Any]) -> str:
    """What an entry asks, one safe line: ``header: question (+N more)``, or the tool."""
    if asks_permission(event):
        tool = _cut(str(event.get("tool") or "?"), WHO_CHARACTERS)
        arguments = event.get("arguments")
        command = arguments.get("command") if isinstance(arguments, Mapping) else None
        if isinstance(command, str) and command:
            # invisible characters as escapes, as the prompt shows them: a newline or a
            # bidi control stays visible rather than joining or reordering what is read
            shown = escape_invisible(command[:WHAT_CHARACTERS * 8])
            return f"{tool}: {_cut(shown, WHAT_CHARACTERS)}"
        said = event.get("description")
        return f"{tool}: {_cut(said, WHAT_CHARACTERS)}" if isinstance(said, str) and said \
            else tool
    return first_question(event, WHAT_CHARACTERS)


def _age(event: Mapping[str, Any]) -> float:
    """How long ago the server says the entry was asked (0 when it does not say)."""
    age = event.get("age")
    if isinstance(age, int | float) and not isinstance(age, bool) and 0 < age < 10 * 365 * 86400:
        return float(age)
    return 0.0


_AGE_UNITS = (("d", 86400), ("h", 3600), ("m", 60))


def age_text(seconds: float) -> str:
    """An age as people say it: ``4s``, ``3m``, ``2h``, ``5d``."""
    seconds = max(0, int(seconds))
    for unit, size in _AGE_UNITS:
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def age_until(seconds: float) -> int:
    """The age at which ``age_text`` of ``seconds`` next reads differently."""
    seconds = max(0, int(seconds))
    for _unit, size in _AGE_UNITS:
        if seconds >= size:
            return (seconds // size + 1) * size
    return seconds + 1


@dataclass(eq=False)
class Entry:
    """One pending batch or permission request, as every desk UI shows it."""

    link: Any  # the desk's ServerLink to the server that asked (answers go back through it)
    event: dict[str, Any]
    number: int  # arrival order, from 1, never reused in this desk
    arrived: float  # the inbox clock's time at arrival
    kind: Kind
    who: Who
    what: str
    taken: bool = False  # another desk has it open
    taken_by: str | None = None  # whose desk, when the server says (a hub names the human)
    opened: bool = False  # this desk has it open

    @property
    def rpc_id(self) -> str:
        return str(self.event["rpc_id"])

    @property
    def key(self) -> EntryKey:
        return (self.link, self.rpc_id)

    @property
    def session_id(self) -> Any:
        return self.event.get("session_id")

    @property
    def delivery(self) -> str:
        """``async`` when no tool call waits for the answer (``docs/async-questions.md``)."""
        return "async" if self.event.get("delivery") == "async" else "wait"

    def age(self, now: float) -> float:
        return max(0.0, now - self.arrived)

    def line(self, now: float) -> str:
        """``N. [kind] age · who · what``; ``taken at another desk`` and ``async`` after the
        age when they apply (first the short fields, so a narrow screen cuts only what)."""
        held = f"taken by {self.taken_by}" if self.taken_by else "taken at another desk"
        tags = "".join((f" · {held}" if self.taken else "",
                        " · async" if self.delivery == "async" else ""))
        return (f"{self.number}. [{self.kind}] {age_text(self.age(now))}{tags} · "
                f"{self.who.line()} · {self.what}")

    def to_json(self, now: float) -> dict[str, Any]:
        """The entry for a program (``--jsonl``, the web desk): every shown field, safe."""
        return {"number": self.number, "rpc_id": self.rpc_id, "session_id": self.session_id,
                "kind": self.kind, "agent": self.who.agent, "cwd": self.who.cwd,
                "pid": self.who.pid, "server": self.who.server, "what": self.what,
                "age": round(self.age(now), 1), "delivery": self.delivery,
                "taken": self.taken, **({"taken_by": self.taken_by} if self.taken_by else {}),
                **({"machine": self.who.machine} if self.who.machine else {})}


@dataclass(frozen=True)
class InboxChange:
    """One change to the list: an entry ``added``, ``removed`` (with why), ``taken`` by
    another desk, or ``free`` again."""

    kind: ChangeKind
    entry: Entry
    reason: str | None = None


Listener = Callable[[InboxChange], None]


@dataclass(eq=False)
class Inbox:
    """The entries of every server link, in arrival order; listeners hear each change."""

    clock: Callable[[], float] = time.monotonic
    _entries: dict[EntryKey, Entry] = field(default_factory=dict)
    _numbers: dict[int, Entry] = field(default_factory=dict)
    _snapshot: list[Entry] | None = None
    _taken: int = 0  # how many entries another desk has open, kept as they change
    _next: int = 1
    _listeners: list[Listener] = field(default_factory=list)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear every change from now on; returns the way to stop."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners \
            else None

    def _tell(self, change: InboxChange) -> None:
        self._snapshot = None
        for listener in list(self._listeners):
            listener(change)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    @property
    def taken(self) -> int:
        """How many entries another desk has open."""
        return self._taken

    @property
    def free(self) -> int:
        """How many entries no other desk has open."""
        return len(self._entries) - self._taken

    def now(self) -> float:
        return self.clock()

    def entries(self) -> list[Entry]:
        """The entries an agent waits for, then the async ones, each in arrival order (a
        snapshot: do not change it)."""
        if self._snapshot is None:
            entries = self._entries.values()
            self._snapshot = [entry for entry in entries if entry.delivery != "async"] + \
                [entry for entry in entries if entry.delivery == "async"]
        return self._snapshot

    def get(self, link: Hashable, rpc_id: Any) -> Entry | None:
        return self._entries.get((link, rpc_id)) if isinstance(rpc_id, str) else None

    def numbered(self, number: int) -> Entry | None:
        """The entry with this arrival number, while it is pending."""
        return self._numbers.get(number)

    def add(self, link: Hashable, event: dict[str, Any]) -> Entry | None:
        """A ``question/requested`` or ``permission/requested`` event; None when it was
        known already (a replay racing the live event) or has no ``rpc_id``."""
        rpc_id = event.get("rpc_id")
        if not isinstance(rpc_id, str) or (link, rpc_id) in self._entries:
            return None
        number = event.get("number")
        if not (isinstance(number, int) and not isinstance(number, bool)
                and 0 < number < 10**12 and number not in self._numbers):
            number = self._next  # a server that numbers nothing, or a number in use here
        entry = Entry(link=link, event=event, number=number,
                      arrived=self.clock() - _age(event),
                      kind=entry_kind(event), who=who_of(event), what=summary_of(event))
        self._next = max(self._next, number) + 1  # never one given before, here or there
        self._entries[entry.key] = entry
        self._numbers[entry.number] = entry
        self._tell(InboxChange("added", entry))
        return entry

    def remove(self, link: Hashable, rpc_id: Any, reason: str) -> Entry | None:
        """The entry settled (answered, cancelled, timed out, its server gone)."""
        if not isinstance(rpc_id, str):
            return None
        entry = self._entries.pop((link, rpc_id), None)
        if entry is None:
            return None
        del self._numbers[entry.number]
        self._taken -= entry.taken
        self._tell(InboxChange("removed", entry, reason))
        return entry

    def remove_link(self, link: Hashable, reason: str) -> list[Entry]:
        """Every entry of a server that went away."""
        gone = [entry for entry in self._entries.values() if entry.link is link]
        for entry in gone:
            self.remove(link, entry.rpc_id, reason)
        return gone

    def mark(self, link: Hashable, rpc_id: Any, taken: bool, by: Any = None) -> Entry | None:
        """Another desk opened (``taken``; ``by`` whom, when the server says) or released the
        entry; None when unchanged or unknown (a server announces a batch before it says who
        has it open)."""
        entry = self.get(link, rpc_id)
        holder = _cut(by, WHO_CHARACTERS) if taken and isinstance(by, str) and by else None
        if entry is None or (entry.taken == taken and entry.taken_by == holder):
            return None
        if entry.taken != taken:
            self._taken += 1 if taken else -1
        entry.taken, entry.taken_by = taken, holder
        self._tell(InboxChange("taken" if taken else "free", entry))
        return entry
