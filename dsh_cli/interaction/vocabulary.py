"""The request/answer vocabulary of the seam (``spec/questions.md``), as pydantic models."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from dsh_cli.core.signal import AbortSignal
from dsh_cli.interaction.constraints import TextRule

__all__ = [
    "ANSWER_FIRST",
    "ELICITATION_FIELDS",
    "LABEL_JOINER",
    "NOT_ANSWERED",
    "SKIPPED",
    "AskContext",
    "AskDefault",
    "AskSource",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "Deadline",
    "ends_on_review",
]

# how every UI reads an answer back: chosen labels joined so, a skip without a default so
LABEL_JOINER = ", "
SKIPPED = "skipped"
ANSWER_FIRST = "answer or skip this question first"  # a submit with a question left open
NOT_ANSWERED = "not answered yet"  # a review row of a question left open


def ends_on_review(questions: Sequence[object], review: bool) -> bool:
    """Whether a batch ends on a review step: two or more questions, or one asked to."""
    return len(questions) > 1 or review


class AskUserQuestionOption(BaseModel):
    """One selectable answer; ``label`` is shown and is also the value returned."""

    model_config = ConfigDict(defer_build=True)

    label: str
    description: str | None = None
    # what the human compares options by (code, a config, a mock-up): newlines kept
    preview: str | None = None


# What a model may not set: the fields below are for askers inside dsh (an MCP server's
# elicitation form), never part of the model-facing schema or its decoding.
ELICITATION_FIELDS = frozenset(
    {"other", "required", "default", "rule", "min_items", "max_items", "warning"})


class AskDefault(BaseModel):
    """A question's default answer: labels, or ``custom`` text; shown, and used on a skip."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    selected: list[str] = Field(default_factory=list)
    custom: str | None = None


class AskUserQuestionItem(BaseModel):
    """One question of a batch; ``id`` is echoed in its answer.

    ``other`` False takes no free text where there are options; ``required`` takes no
    skip; ``default`` answers a skip; ``rule`` checks typed text; ``min_items`` and
    ``max_items`` bound a multi-select; ``warning`` is a line every UI shows.
    """

    model_config = ConfigDict(defer_build=True)

    id: str
    question: str
    detail: str | None = None
    header: str | None = None
    options: list[AskUserQuestionOption] | None = None
    # ``multiSelect`` is Claude Code's spelling: accepted on the way in, never written
    multi_select: bool = Field(
        default=False, validation_alias=AliasChoices("multi_select", "multiSelect"))
    other: bool = True
    required: bool = False
    default: AskDefault | None = None
    rule: TextRule | None = None
    min_items: int | None = None
    max_items: int | None = None
    warning: str | None = None

    @property
    def takes_text(self) -> bool:
        """Whether free text is an answer: always without options, else only with Other."""
        return self.other or not self.has_options

    @property
    def can_skip(self) -> bool:
        """Whether the human may skip it: unless it is required and has no default."""
        return not self.required or self.default is not None

    def skipped_text(self) -> str:
        """A skip as a review reads it back: "skipped", with the default that fills it."""
        default = self.default_text()
        return SKIPPED if default is None else f"{SKIPPED} (default: {default})"

    def default_answer(self) -> AskUserQuestionAnswerItem | None:
        """The default as this question's answer item, or None."""
        if self.default is None:
            return None
        return AskUserQuestionAnswerItem(id=self.id, selected=list(self.default.selected),
                                         custom=self.default.custom)

    def default_text(self) -> str | None:
        """The default as a UI shows it ("default: …"), or None."""
        if self.default is None:
            return None
        if self.default.custom is not None:
            return self.default.custom
        return LABEL_JOINER.join(self.default.selected) or None

    def to_json(self) -> dict[str, Any]:
        """The question as JSON: absent optional fields and the defaults above left out."""
        data = self.model_dump(exclude_none=True)
        if self.other:
            del data["other"]
        if not self.required:
            del data["required"]
        return data

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


class AskSource(BaseModel):
    """Who asks a batch from inside dsh (an MCP server), shown as a heading: "git asks: …"."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    message: str | None = None
    kind: Literal["mcp", "elicitation"] = "elicitation"
    # a batch joining several requests (two forms): each question's own message, by id
    messages: dict[str, str] | None = None


class AskUserQuestionRequest(BaseModel):
    """A batch of questions, with who asks (``agent``) and the owner's abort ``signal``.

    ``call_id`` names the owning tool call. None of these three appear in JSON. The seam
    never writes to a request: what belongs to one showing of it (its ``rpc_id``, its
    deadline) is on the ``AskContext`` the provider is handed. ``source``, ``declinable``
    (the human may decline: ``ASK_DECLINED``) and ``review`` (end on the review screen
    even for one question) are set by askers inside dsh, never by a model; so is
    ``continuation``, an opaque JSON object stored with the batch for the asker's resume
    (not in JSON either).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    questions: list[AskUserQuestionItem]
    source: AskSource | None = None
    declinable: bool = False
    review: bool = False
    agent: Any = Field(default=None, exclude=True)
    signal: AbortSignal | None = Field(default=None, exclude=True)
    call_id: str | None = Field(default=None, exclude=True)
    continuation: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)

    @property
    def reviewed(self) -> bool:
        """Whether the batch ends on a review step: two or more questions, or asked to."""
        return ends_on_review(self.questions, self.review)

    def questions_json(self) -> list[dict[str, Any]]:
        """The questions as JSON objects, absent optional fields left out."""
        return [item.to_json() for item in self.questions]

    def source_json(self) -> dict[str, Any] | None:
        return None if self.source is None else self.source.model_dump(exclude_none=True)

    def heading(self, question_id: str | None = None) -> str | None:
        """The line every UI shows above the batch: "git asks: …", or None; with
        ``question_id``, the line above that question (its own form's message)."""
        if self.source is None:
            return None
        own = (self.source.messages or {}).get(question_id or "")
        if own:
            return f"{self.source.name} asks: {own}"
        if self.source.message:
            return f"{self.source.name} asks: {self.source.message}"
        return f"{self.source.name} asks"


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
    # per question id, the labels chosen when the same question was last answered: a UI
    # highlights them, never submits them by itself
    last_answers: dict[str, list[str]] = field(default_factory=dict)
    # per question id, where that last answer came from: ``session_id`` and ``answered_at``
    last_answered: dict[str, dict[str, str]] = field(default_factory=dict)


class AskUserQuestionAnswerItem(BaseModel):
    """The answer to one question: labels chosen, or ``custom`` text, or neither (skip);
    ``note`` is what the human added to it, with any of the three."""

    model_config = ConfigDict(defer_build=True)

    id: str
    selected: list[str] = Field(default_factory=list)
    custom: str | None = None
    note: str | None = Field(default=None, description=(
        "Free text the human added to their answer (e.g. 'PostgreSQL, but version 16'); "
        "present only when given."))

    def to_json(self) -> dict[str, Any]:
        """Keys in the order ``id``, ``selected``, ``custom``, ``note``; the last two only
        when present."""
        data: dict[str, Any] = {"id": self.id, "selected": list(self.selected)}
        if self.custom is not None:
            data["custom"] = self.custom
        if self.note is not None:
            data["note"] = self.note
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
