"""The optional traits of a question provider, one small protocol each, and their readers.

A provider offers a trait by naming its protocol among its bases and setting the attribute
(mypy then checks the attribute's type); the seam reads a trait only through ``isinstance``
on these protocols, never by probing with ``getattr`` (a test scans the package for that).
``dsh_cli/extensions.py`` lists them, and a test checks that page against this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = [
    "PROVIDER_TRAITS",
    "AnsweredBy",
    "AnsweredThroughTable",
    "Concurrent",
    "Immediate",
    "Seen",
    "TakesTurns",
    "answerer_of",
    "is_concurrent",
    "is_immediate",
    "seen_of",
    "takes_turns",
]


@runtime_checkable
class Concurrent(Protocol):
    """Holds many batches at once (``concurrent = True``, exactly): ``ask`` is called for
    each batch as it comes, with no turn queue."""

    concurrent: bool


@runtime_checkable
class TakesTurns(Protocol):
    """Draws on the screen (``takes_turns = True``): async batches are shown only when
    ``LaterQuestions.show`` is called, at the end of a turn."""

    takes_turns: bool


@runtime_checkable
class Immediate(Protocol):
    """Answers without a human, at once (``immediate = True``): an async batch's outcome is
    awaited before the model's next call."""

    immediate: bool


@runtime_checkable
class AnsweredBy(Protocol):
    """Who answered, as the store keeps it, when ``ask`` returns the answer."""

    answered_by: str


@runtime_checkable
class AnsweredThroughTable(Protocol):
    """Who answered when a batch is settled through the pending table (a page, a desk)."""

    answered_through_table: str


@runtime_checkable
class Seen(Protocol):
    """Whether a human's desk has taken a batch (``get_user_answer`` says when none has)."""

    def seen(self, rpc_id: str) -> bool: ...


PROVIDER_TRAITS: tuple[type, ...] = (Concurrent, TakesTurns, Immediate, AnsweredBy,
                                     AnsweredThroughTable, Seen)


def is_concurrent(provider: object) -> bool:
    """Whether ``provider`` holds many batches at once (a truthy non-bool does not count)."""
    return isinstance(provider, Concurrent) and provider.concurrent is True


def takes_turns(provider: object) -> bool:
    """Whether ``provider`` draws, so async batches wait for ``show``."""
    return isinstance(provider, TakesTurns) and provider.takes_turns is True


def is_immediate(provider: object) -> bool:
    """Whether ``provider`` answers at once, without a human."""
    return isinstance(provider, Immediate) and provider.immediate is True


def answerer_of(provider: object, *, through_table: bool = False) -> str:
    """Who answered: ``answered_by``, or ``answered_through_table`` (else a controller);
    a provider that names neither is recorded under its class name."""
    name: object = None
    if through_table:
        name = (provider.answered_through_table if isinstance(provider, AnsweredThroughTable)
                else "controller")
    elif isinstance(provider, AnsweredBy):
        name = provider.answered_by
    return name if isinstance(name, str) and name else type(provider).__name__


def seen_of(provider: object) -> Callable[[str], bool] | None:
    """The provider's ``seen``, when it knows which batches a desk has taken."""
    return provider.seen if isinstance(provider, Seen) else None
