"""The frames a controller sends over the JSON-lines protocol (``spec/relay.md``).

``parse_frame`` turns one input line into a typed frame or raises ``BadFrame`` with a
message naming the problem: not JSON, not an object, an unknown ``type``, or a known
type with missing or mistyped fields. Whether an answer fits its question is not a frame
problem: the pending table refuses it as ``bad-response`` and the question stays pending.
Unknown extra fields are ignored, so controllers can send newer frames to older dsh.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from dsh_cli.core.errors import BAD_FRAME, HarnessError
from dsh_cli.core.shapes import format_validation_error

__all__ = [
    "BAD_FRAME",
    "BadFrame",
    "Frame",
    "QuestionAnswerFrame",
    "QuestionCancelFrame",
    "QuestionsReplayFrame",
    "UserMessageFrame",
    "parse_frame",
]


class BadFrame(HarnessError):
    """An input line that is not a frame dsh understands; the relay reports it and goes on."""

    def __init__(self, message: str) -> None:
        super().__init__(message, BAD_FRAME)


class _Frame(BaseModel):
    model_config = ConfigDict(extra="ignore")


class QuestionAnswerFrame(_Frame):
    """``question/answer``: ``answers`` is checked against the question by the table."""

    type: Literal["question/answer"]
    rpc_id: StrictStr
    session_id: StrictStr | None
    answers: list[Any]


class QuestionCancelFrame(_Frame):
    type: Literal["question/cancel"]
    rpc_id: StrictStr


class QuestionsReplayFrame(_Frame):
    type: Literal["questions/replay"]


class UserMessageFrame(_Frame):
    type: Literal["user/message"]
    content: StrictStr


Frame = QuestionAnswerFrame | QuestionCancelFrame | QuestionsReplayFrame | UserMessageFrame

FRAME_TYPES: dict[str, type[_Frame]] = {
    "question/answer": QuestionAnswerFrame,
    "question/cancel": QuestionCancelFrame,
    "questions/replay": QuestionsReplayFrame,
    "user/message": UserMessageFrame,
}


def parse_frame(line: str) -> Frame:
    """One frame from one line, or ``BadFrame`` saying what is wrong with it."""
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as error:
        raise BadFrame(f"not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise BadFrame(f"a frame must be a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise BadFrame('a frame needs a string "type"')
    model = FRAME_TYPES.get(kind)
    if model is None:
        known = ", ".join(FRAME_TYPES)
        raise BadFrame(f"unknown frame type {json.dumps(kind)[:80]} (known: {known})")
    try:
        return model.model_validate(data)  # type: ignore[return-value]
    except ValidationError as error:
        raise BadFrame(f"{kind}: {format_validation_error(error)}") from None
