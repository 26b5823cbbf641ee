"""The request/answer vocabulary of the seam (``spec/questions.md``), as pydantic models."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from dsh_cli.core.signal import AbortSignal

__all__ = [
    "AskContext",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "Deadline",
]


class AskUserQuestionOption(BaseModel):
    """One selectable answer; ``label`` is shown and is also the value returned."""

    model_config = ConfigDict(defer_build=True)

    label: str
    description: str | None = None


class AskUserQuestionItem(BaseModel):
    """One question of a batch; ``id`` is echoed in its answer."""

    model_config = ConfigDict(defer_build=True)

    id: str
    question: str
    detail: str | None = None
    header: str | None = None
    options: list[AskUserQuestionOption] | None = None
    # ``multiSelect`` is Claude Code's spelling: accepted on the way in, never written
    multi_select: bool = Field(
        default=False, validation_alias=AliasChoices("multi_select", "multiSelect"))

    @property
    def has_options(self) -> bool:
        return bool(self.options)

    @property
    def is_multi(self) -> bool:
        """``multi_select`` counts only where there are options to select."""
        return self.multi_select and self.has_options

    @property
    def labels(self) -> list[str]:
        return [option.label for option in self.options or []]


class Deadline:
    """A question timeout that a provider may show as a countdown and stop on a key."""

    def __init__(self, seconds: float, loop_time: float) -> None:
        self.seconds = seconds
        self.expires_at = loop_time + seconds
        self.stopped = False
        self._on_stop: list[Callable[[], object]] = []

    def remaining(self, now: float) -> float:
        return max(0.0, self.expires_at - now)

    def stop(self) -> None:
        """The human engaged: the countdown ends and the question waits for them."""
        if not self.stopped:
            self.stopped = True
            for callback in self._on_stop:
                callback()

    def on_stop(self, callback: Callable[[], object]) -> None:
        self._on_stop.append(callback)


class AskUserQuestionRequest(BaseModel):
    """A batch of questions, with who asks (``agent``) and the owner's abort ``signal``.

    ``call_id`` names the owning tool call. None of these three appear in JSON. The seam
    never writes to a request: what belongs to one showing of it (its ``rpc_id``, its
    deadline) is on the ``AskContext`` the provider is handed.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    questions: list[AskUserQuestionItem]
    agent: Any = Field(default=None, exclude=True)
    signal: AbortSignal | None = Field(default=None, exclude=True)
    call_id: str | None = Field(default=None, exclude=True)

    def questions_json(self) -> list[dict[str, Any]]:
        """The questions as JSON objects, absent optional fields left out."""
        return [item.model_dump(exclude_none=True) for item in self.questions]


@dataclass(frozen=True, eq=False)
class AskContext:
    """One showing of a request, as the seam hands it to a provider.

    The seam makes one per ``ask``: ``rpc_id`` (minted, or the stored one a resumed
    session passes in), the ``session_id`` the batch belongs to, and the ``deadline``
    when a question timeout applies. So the same request object can be asked again,
    even while an earlier ask of it is still queued.
    """

    request: AskUserQuestionRequest
    rpc_id: str
    session_id: str | None = None
    deadline: Deadline | None = None


class AskUserQuestionAnswerItem(BaseModel):
    """The answer to one question: labels chosen, or ``custom`` text, or neither (skip)."""

    model_config = ConfigDict(defer_build=True)

    id: str
    selected: list[str] = Field(default_factory=list)
    custom: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Keys in the order ``id``, ``selected``, ``custom``; ``custom`` only when present."""
        data: dict[str, Any] = {"id": self.id, "selected": list(self.selected)}
        if self.custom is not None:
            data["custom"] = self.custom
        return data

    @property
    def skipped(self) -> bool:
        return not self.selected and self.custom is None


class AskUserQuestionAnswer(BaseModel):
    """A completed batch: one item per question, in order (skips included)."""

    model_config = ConfigDict(defer_build=True)

    answers: list[AskUserQuestionAnswerItem]

    def to_json(self) -> dict[str, Any]:
        return {"answers": [item.to_json() for item in self.answers]}

    def to_compact_json(self) -> str:
        """The exact text the model receives as the tool result."""
        import json

        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))
