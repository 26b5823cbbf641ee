"""Property: any tool arguments decode to a valid request or a routable error, nothing else."""

from __future__ import annotations

from harness.hardening_strategies import ANY_JSON, tool_arguments
from hypothesis import event, given

from dsh_cli.interaction import (
    EMPTY_QUESTIONS,
    INVALID_QUESTIONS,
    LIMITS,
    AskUserQuestionRequest,
    UserInteractionError,
    check_questions,
)
from dsh_cli.tools import AskUserQuestionTool
from dsh_cli.tools.registry import INVALID_ARGS, ToolError

TOOL = AskUserQuestionTool()


def _decode_and_check(arguments) -> AskUserQuestionRequest | str:
    """The accepted request, or the error code; any other exception fails the test."""
    try:
        items = TOOL.decode(arguments).questions
    except ToolError as error:
        assert error.code == INVALID_ARGS
        assert error.message and "\n" not in error.message
        return error.code
    request = AskUserQuestionRequest(questions=items)
    try:
        check_questions(request)
    except UserInteractionError as error:
        assert error.code in (EMPTY_QUESTIONS, INVALID_QUESTIONS)
        if error.code == INVALID_QUESTIONS:
            assert error.message.startswith("questions")  # names the failing path
        return error.code
    return request


def _assert_valid(request: AskUserQuestionRequest) -> None:
    ids = [item.id for item in request.questions]
    assert 1 <= len(ids) <= LIMITS["questions"] and len(set(ids)) == len(ids)
    for item in request.questions:
        assert item.id.strip() and item.question.strip()
        labels = [label.strip() for label in item.labels]
        assert all(labels) and len(set(labels)) == len(labels)
        assert all("\n" not in label and "\x1b" not in label for label in item.labels)
        assert len(item.labels) <= LIMITS["options"]


@given(tool_arguments())
def test_model_arguments_give_a_valid_request_or_a_routable_error(arguments):
    outcome = _decode_and_check(arguments)
    event(outcome if isinstance(outcome, str) else "accepted")
    if isinstance(outcome, AskUserQuestionRequest):
        _assert_valid(outcome)


@given(ANY_JSON)
def test_any_json_value_gives_a_valid_request_or_a_routable_error(arguments):
    outcome = _decode_and_check(arguments)
    if isinstance(outcome, AskUserQuestionRequest):
        _assert_valid(outcome)


@given(tool_arguments())
def test_an_accepted_request_round_trips_through_its_own_json(arguments):
    outcome = _decode_and_check(arguments)
    if isinstance(outcome, AskUserQuestionRequest):
        again = _decode_and_check({"questions": outcome.questions_json()})
        assert isinstance(again, AskUserQuestionRequest)
        assert again.questions_json() == outcome.questions_json()
