"""Deeply nested JSON (a model slip or a hostile file) is a routable error, not a crash."""

from __future__ import annotations

import pytest

from dsh_cli.providers.answers_file import AnswersFileError, AnswersFileProvider
from dsh_cli.tools import AskUserQuestionTool
from dsh_cli.tools.registry import INVALID_ARGS, ToolError

DEEP = "[" * 100_000


@pytest.mark.parametrize("arguments", [DEEP, {"questions": DEEP}], ids=["raw", "questions"])
def test_deeply_nested_tool_arguments_are_invalid_args(arguments):
    with pytest.raises(ToolError) as caught:
        AskUserQuestionTool().decode(arguments)
    assert caught.value.code == INVALID_ARGS


def test_a_deeply_nested_answers_file_is_an_answers_file_error(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(DEEP)
    with pytest.raises(AnswersFileError):
        AnswersFileProvider.load(path)
