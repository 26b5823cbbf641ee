"""How a question batch ended: one closed set, from which every code, word and stored value
is derived.

    member       error code     question/resolved  questions.status  word
    ANSWERED     —              answered           answered          answered
    CANCELLED    ASK_CANCELLED  cancelled          cancelled         cancelled
    DECLINED     ASK_DECLINED   declined           declined          declined
    TIMED_OUT    ASK_TIMEOUT    timeout            timeout           timed out
    DISCUSSED    ASK_DISCUSS    discuss            discussed         discussed
    ABORTED      ASK_ABORTED    aborted            aborted           aborted
    NO_PROVIDER  NO_PROVIDER    aborted            no_provider       no one to answer

The word is what ``dsh history`` and the terminal's last line show; the page (``shown.py``)
says its sentence with the wire word after it ("Questions dismissed (cancelled)").

The ``question/resolved`` words are the relay's (``spec/relay.md``): desks, controllers and
the web page read them, so they are kept as they were (a batch nobody could answer travels
as ``aborted``). Any other code a batch ends with (an answer the seam refused) is ABORTED,
its code kept beside it in the store. A permission request that ends without a decision
says ``cancelled``, ``timeout`` or ``aborted`` (``permission_outcome``).
"""

from __future__ import annotations

from enum import Enum

from dsh_cli.core.errors import (
    ASK_ABORTED,
    ASK_CANCELLED,
    ASK_DECLINED,
    ASK_DISCUSS,
    ASK_DISCUSS_MESSAGE,
    ASK_TIMEOUT,
    NO_PROVIDER,
    UserInteractionError,
)

__all__ = ["PERMISSION_ENDINGS", "Outcome", "permission_outcome"]


class Outcome(Enum):
    """One way a batch ends; its ``code``, ``event`` word, ``stored`` status and ``word``."""

    # (code, event, stored, word, the page's sentence, the asker's message by default)
    ANSWERED = (None, "answered", "answered", "answered", "Answered", "")
    CANCELLED = (ASK_CANCELLED, "cancelled", "cancelled", "cancelled", "Questions dismissed",
                 "the user cancelled the questions")
    DECLINED = (ASK_DECLINED, "declined", "declined", "declined", "Questions declined",
                "the user declined the questions")
    TIMED_OUT = (ASK_TIMEOUT, "timeout", "timeout", "timed out", "Questions timed out",
                 "the question timed out")
    DISCUSSED = (ASK_DISCUSS, "discuss", "discussed", "discussed", "Questions left to discuss",
                 ASK_DISCUSS_MESSAGE)
    ABORTED = (ASK_ABORTED, "aborted", "aborted", "aborted", "Questions withdrawn",
               "the question was aborted")
    NO_PROVIDER = (NO_PROVIDER, "aborted", "no_provider", "no one to answer",
                   "Nobody could answer the questions", "no question provider can answer")

    def __init__(self, code: str | None, event: str, stored: str, word: str, sentence: str,
                 message: str) -> None:
        self.code = code  # the error code a tool result carries; None for an answer
        self.event = event  # the ``outcome`` of a ``question/resolved`` on the wire
        self.stored = stored  # ``questions.status`` in the store
        self.word = word  # what a human reads
        self.sentence = sentence  # what the web page says of it
        self.message = message  # the error's message when nothing more is known

    @classmethod
    def of_code(cls, code: str | None) -> Outcome:
        """The outcome a batch that ended with ``code`` had (any other code: ABORTED)."""
        return _BY_CODE.get(code, cls.ABORTED)

    @classmethod
    def of_event(cls, word: object) -> Outcome | None:
        """The outcome a ``question/resolved`` word names (``aborted``: ABORTED); None if none."""
        return _BY_EVENT.get(word) if isinstance(word, str) else None

    @classmethod
    def of_stored(cls, status: object) -> Outcome | None:
        """The outcome a stored status names; None for a batch still open (or unknown)."""
        return _BY_STORED.get(status) if isinstance(status, str) else None

    @property
    def closes_async(self) -> bool:
        """Whether it ends an async batch for good: an abort (a resume re-asks it), a
        discussion and "nobody to answer" leave it open for the next one who can."""
        return self not in (Outcome.ABORTED, Outcome.DISCUSSED, Outcome.NO_PROVIDER)

    def error(self, message: str | None = None) -> UserInteractionError:
        """This outcome as the error the asker gets (``message`` says more than the default)."""
        if self.code is None:
            raise ValueError("an answered batch is not an error")
        return UserInteractionError(message or self.message, self.code)

    def said(self, *, by_agent: bool = False) -> str:
        """The word ``dsh history`` shows: nobody to answer an agent's batch is no desk."""
        if self is Outcome.NO_PROVIDER:
            return f"{'no desk' if by_agent else self.word} ({NO_PROVIDER})"
        return self.word

    def shown(self) -> str:
        """The page's line: its sentence, then the wire word unless it was answered."""
        return self.sentence if self.code is None else f"{self.sentence} ({self.event})"


_BY_CODE = {outcome.code: outcome for outcome in Outcome}
_BY_EVENT = {outcome.event: outcome for outcome in reversed(Outcome)}  # first one wins
_BY_STORED = {outcome.stored: outcome for outcome in Outcome}
# how a permission request ends without a decision; any other code is an abort
_PERMISSION_ENDINGS = (Outcome.CANCELLED, Outcome.TIMED_OUT, Outcome.ABORTED)
PERMISSION_ENDINGS = tuple(outcome.event for outcome in _PERMISSION_ENDINGS)


def permission_outcome(code: str | None) -> str:
    """The ``permission/resolved`` outcome of a request that ended with ``code``."""
    outcome = Outcome.of_code(code)
    return (outcome if outcome in _PERMISSION_ENDINGS else Outcome.ABORTED).event
