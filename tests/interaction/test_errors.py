"""Errors carry data: ``HarnessError(message, code)`` and the seam's codes."""

from __future__ import annotations

import dsh_cli.interaction as seam
from dsh_cli.interaction import HarnessError, UserInteractionError

SEAM_CODES = [
    "EMPTY_QUESTIONS", "INVALID_QUESTIONS", "NO_PROVIDER", "DUPLICATE_PROVIDER",
    "CALLER_NOT_LIVE", "DELEGATED_CALLER", "ASK_CANCELLED", "ASK_ABORTED", "ASK_TIMEOUT",
    "INVALID_ANSWER",
]


def test_the_seam_codes_are_their_own_names():
    assert {name: getattr(seam, name) for name in SEAM_CODES} == {n: n for n in SEAM_CODES}


def test_harness_error_carries_message_and_code():
    error = HarnessError("something broke", "SOME_CODE")
    assert (str(error), error.message, error.code) == ("something broke", "something broke",
                                                       "SOME_CODE")


def test_user_interaction_error_is_a_harness_error_with_name_code_message():
    error = UserInteractionError("the user cancelled the questions", "ASK_CANCELLED")
    assert isinstance(error, HarnessError)
    assert error.to_dict() == {"name": "UserInteractionError", "code": "ASK_CANCELLED",
                               "message": "the user cancelled the questions"}
