"""What the hub keeps, as typed values: entries, tokens, claims, audit rows and outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dsh_cli.core.errors import STORE_ERROR, StoreError
from dsh_cli.core.limits import PENDING_BATCHES, PENDING_BYTES_PER_SESSION

__all__ = [
    "AUDIT_ACTIONS",
    "BATCH_TOO_LARGE",
    "ENTRY_STATES",
    "INVALID_NAME",
    "KEY_REUSED",
    "NOT_PENDING",
    "TOKEN_EXISTS",
    "TOKEN_NOT_FOUND",
    "AgentCaps",
    "Answered",
    "AuditAction",
    "AuditRow",
    "Change",
    "Claimed",
    "Entry",
    "EntryKind",
    "EntryState",
    "Heard",
    "HistoryItem",
    "HistoryPage",
    "HubStoreError",
    "IssuedToken",
    "KeptAsk",
    "NotPending",
    "Released",
    "Renewed",
    "TakenBy",
    "Token",
    "TokenKind",
]

# a batch or answer whose JSON is larger than one MCP message could have carried it
BATCH_TOO_LARGE = "BATCH_TOO_LARGE"
# an answer, claim or cancel that came after the entry stopped being pending
NOT_PENDING = "NOT_PENDING"
# ``dsh hub token add`` with a name that already has a token
TOKEN_EXISTS = "TOKEN_EXISTS"
# an ask repeating an earlier ask's key with another batch
KEY_REUSED = "KEY_REUSED"
# ``dsh hub token rm`` of a name that has no token
TOKEN_NOT_FOUND = "TOKEN_NOT_FOUND"
# a token, team or entry name outside the characters and length the hub accepts
INVALID_NAME = "INVALID_NAME"

EntryKind = Literal["question", "permission"]
EntryState = Literal["pending", "answered", "cancelled", "timeout"]
# every state, for a command that offers them as a choice (``dsh history --hub --state``)
ENTRY_STATES: tuple[EntryState, ...] = ("pending", "answered", "cancelled", "timeout")
TokenKind = Literal["agent", "human"]
AuditAction = Literal["ask", "claim", "release", "answer", "cancel", "timeout"]
AUDIT_ACTIONS: tuple[AuditAction, ...] = ("ask", "claim", "release", "answer", "cancel",
                                          "timeout")


class HubStoreError(StoreError):
    """The hub's store cannot be used, or refused a request; ``code`` says which."""

    def __init__(self, message: str, code: str = STORE_ERROR) -> None:
        super().__init__(message, code)


@dataclass(frozen=True)
class AgentCaps:
    """What one agent (one token) may have pending at once, in entries and in JSON bytes.

    The defaults are ``dsh mcp``'s for one session's async batches: an agent that reaches
    the hub through one forwarder asks no more through it than it could locally.
    """

    entries: int = PENDING_BATCHES
    bytes: int = PENDING_BYTES_PER_SESSION


@dataclass(frozen=True)
class Entry:
    """One pending (or settled) question batch or permission request, and who asked it."""

    id: str
    kind: EntryKind
    batch: dict[str, Any]
    token: str  # the agent token's name: who the hub let in
    agent: str  # the agent's own name for itself (its MCP client name)
    machine: str
    cwd: str
    state: EntryState
    answer: dict[str, Any] | None
    answered_by: str | None
    claimed_by: str | None
    claim_expires: float | None
    created_at: float
    deadline: float | None
    resolved_at: float | None
    team: str | None = None  # the team its route named; None: every human's (routes.py)

    @property
    def answered(self) -> bool:
        """A desk's frame settled it (an answer, a dismissal, a decline or a decision)."""
        return self.state == "answered"

    @property
    def timed_out(self) -> bool:
        """Its deadline passed before any desk settled it."""
        return self.state == "timeout"

    @property
    def withdrawn(self) -> bool:
        """Its agent cancelled it, or its asking process went away, before any answer."""
        return self.state == "cancelled"

    def taken_by(self, now: float) -> str | None:
        """The human whose lease on this entry is still running at ``now``, if any."""
        if self.state != "pending" or self.claimed_by is None or self.claim_expires is None:
            return None
        return self.claimed_by if self.claim_expires > now else None


@dataclass(frozen=True)
class KeptAsk:
    """An async question as a list of its agent's reads it: its key (the ticket) and where it
    stands, without its batch or answer."""

    entry_id: str
    key: str
    state: EntryState
    created_at: float
    resolved_at: float | None

    @property
    def withdrawn(self) -> bool:
        """As ``Entry.withdrawn``: cancelled before any answer."""
        return self.state == "cancelled"


@dataclass(frozen=True)
class Token:
    """A token's holder as the hub knows it; the token itself is never kept."""

    name: str
    kind: TokenKind
    team: str | None
    created_at: float


@dataclass(frozen=True)
class IssuedToken:
    """A new token: ``secret`` is shown once, to the one who made it, and never stored."""

    token: Token
    secret: str


@dataclass(frozen=True)
class AuditRow:
    """One step of an entry's life: who did what, when, through which hub process."""

    id: int
    entry_id: str
    action: AuditAction
    actor: str
    replica: str
    at: float


@dataclass(frozen=True)
class HistoryItem:
    """One audit row with the entry it is a step of, as ``dsh history --hub`` shows it."""

    step: AuditRow
    entry: Entry


@dataclass(frozen=True)
class HistoryPage:
    """A page of history; ``more``: further steps match (read on after the last one)."""

    items: tuple[HistoryItem, ...]
    more: bool


@dataclass(frozen=True)
class Change:
    """A wake-up another hub process hears: an entry changed, and how."""

    event: AuditAction
    entry_id: str
    replica: str


@dataclass(frozen=True)
class Heard:
    """What one wait of a listener heard; ``missed``: some changes may have gone unheard
    (its connection was lost, or it fell behind), so re-read the store."""

    changes: tuple[Change, ...] = ()
    missed: bool = False


# -- outcomes: each call that can lose a race returns one of these, never raises for it ----


@dataclass(frozen=True)
class Answered:
    """This answer won: the entry went from pending to answered, once."""

    entry: Entry


@dataclass(frozen=True)
class NotPending:
    """The entry was no longer pending (answered, cancelled, timed out) or never existed."""

    entry_id: str
    state: EntryState | None  # None: no such entry
    code: str = NOT_PENDING


@dataclass(frozen=True)
class Claimed:
    """The lease is this human's until ``expires`` (newly taken, or taken over once expired)."""

    entry_id: str
    human: str
    expires: float


@dataclass(frozen=True)
class Renewed:
    """This human already held the lease; it now runs until ``expires``."""

    entry_id: str
    human: str
    expires: float


@dataclass(frozen=True)
class TakenBy:
    """Another human holds a running lease on the entry."""

    entry_id: str
    human: str
    expires: float


@dataclass(frozen=True)
class Released:
    """The human's lease was let go (or had already lapsed)."""

    entry_id: str
    human: str
