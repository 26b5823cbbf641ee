"""Deeply nested JSON (a model slip or a hostile file) is a routable error, not a crash."""

from __future__ import annotations

import subprocess

import pytest
from harness.dsh_under_test import DSH

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


@pytest.mark.parametrize("request_text", [
    DEEP + "]" * 100_000,
    '{"questions": ' + DEEP + "]" * 100_000 + "}",
    '{"questions": [{"id": "a", "question": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001
    + "]}",
], ids=["array", "questions", "question-object"])
def test_dsh_ask_with_a_request_nested_100000_deep_is_invalid_questions(tmp_path, request_text):
    """Like a script or an answers file: one line, exit 2, not ``INTERNAL_ERROR``."""
    (tmp_path / "a.json").write_text('{"a": "x"}')
    (tmp_path / "deep.json").write_text(request_text)
    for args, stdin in ((["deep.json"], None), (["-"], request_text)):
        result = subprocess.run([DSH, "ask", "--answers", "a.json", *args], cwd=tmp_path,
                                input=stdin, stdin=None if stdin else subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=60)
        assert (result.returncode, result.stdout) == (2, ""), result.stderr
        assert result.stderr == "dsh: INVALID_QUESTIONS: request: JSON nested too deeply\n"
