"""The model protocol: a streamed assistant turn, whatever serves it.

A model's ``stream(messages, tools)`` yields ``TextDelta`` and ``ReasoningDelta`` as text
arrives and ends with exactly one ``Completion``: the whole assistant message, its tool
calls (arguments as raw JSON text, exactly as the model wrote them) and usage.
``messages`` and ``tools`` are in the OpenAI chat-completions format.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

# one tool-call shape for what a model streams and what the conversation keeps
from dsh_cli.core.conversation import ToolCall as ModelToolCall
from dsh_cli.core.errors import MODEL_ERROR, ModelError

__all__ = [
    "MODEL_ERROR",
    "ChatModel",
    "Completion",
    "ModelError",
    "ModelToolCall",
    "ReasoningDelta",
    "RetryHook",
    "RetryNotice",
    "TextDelta",
    "Usage",
    "ignore_retry",
]


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """The finished assistant turn."""

    content: str
    tool_calls: list[ModelToolCall] = field(default_factory=list)
    usage: Usage | None = None
    reasoning: str | None = None


StreamItem = TextDelta | ReasoningDelta | Completion


@dataclass(frozen=True)
class RetryNotice:
    """Told to ``on_retry`` before each wait: which attempt failed, why, and for how long."""

    attempt: int
    delay: float
    error: ModelError


RetryHook = Callable[[RetryNotice], None]


def ignore_retry(notice: RetryNotice) -> None:
    """The default ``on_retry``: nothing to say (and a model that never retries never calls it)."""


class ChatModel(Protocol):
    """Anything that can stream an assistant turn.

    ``on_retry`` is told before each wait when a call failed and will be tried again (a
    real API's rate limit or outage), so a front door can say why it is waiting.
    """

    name: str
    on_retry: RetryHook

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamItem]: ...
