"""Property: answer validation normalises or refuses with INVALID_ANSWER, and is idempotent."""

from __future__ import annotations

from harness.hardening_strategies import ANY_JSON, answers_for, rarely, valid_requests
from hypothesis import event, given
from hypothesis import strategies as st

from dsh_cli.interaction import (
    INVALID_ANSWER,
    AskUserQuestionAnswer,
    UserInteractionError,
    validate_answer,
)


@st.composite
def request_and_answer(draw):
    request = draw(valid_requests())
    # mostly answers shaped for the request; sometimes any JSON at all
    if draw(rarely(5)):
        return request, draw(ANY_JSON)
    return request, draw(answers_for(request))


def _assert_normalised(request, answer: AskUserQuestionAnswer) -> None:
    assert [item.id for item in answer.answers] == [q.id for q in request.questions]
    for question, item in zip(request.questions, answer.answers, strict=True):
        labels = question.labels
        if item.custom is not None:
            assert item.custom == item.custom.strip() and item.custom
            assert item.selected == []
        assert item.selected == [label for label in labels if label in item.selected]
        assert len(set(item.selected)) == len(item.selected)
        if not question.is_multi:
            assert len(item.selected) <= 1


@given(request_and_answer())
def test_any_answer_is_normalised_or_invalid_answer(case):
    request, raw = case
    try:
        answer = validate_answer(request, raw)
    except UserInteractionError as error:
        assert error.code == INVALID_ANSWER
        assert error.message
        event("INVALID_ANSWER")
        return
    event("normalised")
    _assert_normalised(request, answer)


@given(request_and_answer())
def test_a_normalised_answer_validates_to_itself(case):
    request, raw = case
    try:
        answer = validate_answer(request, raw)
    except UserInteractionError:
        return
    assert validate_answer(request, answer) == answer
    assert validate_answer(request, answer.to_json()) == answer
    assert validate_answer(request, AskUserQuestionAnswer.model_validate_json(
        answer.to_compact_json())) == answer
