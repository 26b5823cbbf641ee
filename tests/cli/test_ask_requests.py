"""`dsh ask` requests as a human writes them: strict fields, the alias, piped stdin."""

from __future__ import annotations

import json
import subprocess

import pytest
from harness.dsh_under_test import DSH


def dsh(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    # a new session: no controlling terminal, so /dev/tty cannot answer either
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=60, start_new_session=True)


def one_line(result: subprocess.CompletedProcess[str], status: int, start: str) -> str:
    assert result.returncode == status, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(start), result.stderr
    return result.stderr


def test_multiselect_alias_gives_a_multi_select_question(tmp_path):
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"f": ["a", "b"]}))
    request = {"questions": [{"id": "f", "question": "Features?", "multiSelect": True,
                              "options": [{"label": "a"}, {"label": "b"}]}]}
    result = dsh("ask", "-", "--answers", str(answers), input=json.dumps(request))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"answers": [{"id": "f", "selected": ["a", "b"]}]}


@pytest.mark.parametrize(("request_data", "names"), [
    ({"questions": [{"id": "a", "question": "Q?", "multi": True}]},
     'questions[0]: unknown field "multi"'),
    ({"questions": [{"id": "a", "question": "Q?"}], "title": "x"},
     'request: unknown field "title"'),
    ({"questions": [{"id": "a", "question": "Q?", "options": [{"label": "x", "desc": "d"}]}]},
     'questions[0].options[0]: unknown field "desc"'),
])
def test_unknown_fields_are_refused_naming_them(tmp_path, request_data, names):
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"a": "x"}))
    line = one_line(dsh("ask", "-", "--answers", str(answers), input=json.dumps(request_data)),
                    2, "dsh: INVALID_QUESTIONS: ")
    assert names in line


@pytest.mark.parametrize("text", ["[1, 2]", '"hello"', "null"])
def test_a_top_level_that_is_not_an_object_says_what_is_expected(text):
    line = one_line(dsh("ask", "-", input=text), 2, "dsh: INVALID_QUESTIONS: request: expected ")
    assert '{"questions": [...]}' in line
    assert "dictionary" not in line and "AskUserQuestionRequest" not in line


def test_piped_stdin_is_the_request_without_a_dash(tmp_path):
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"name": "acme"}))
    request = {"questions": [{"id": "name", "question": "Project name?"}]}
    result = dsh("ask", "--answers", str(answers), input=json.dumps(request))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answers"][0]["custom"] == "acme"


def test_nothing_piped_and_no_request_is_a_usage_error():
    one_line(dsh("ask", input=""), 2, "dsh: USAGE: give a REQUEST")


def test_an_invalid_request_with_nothing_to_answer_is_invalid_questions_not_no_provider():
    request = {"questions": [{"id": "a", "question": "Q?",
                              "options": [{"label": "x"}, {"label": "x"}]}]}
    one_line(dsh("ask", input=json.dumps(request)), 2,
             'dsh: INVALID_QUESTIONS: questions[0].options[1].label: duplicate label "x"')
    # a valid one in the same surroundings has no answer source
    one_line(dsh("ask", "-q", "Q?"), 3, "dsh: NO_PROVIDER: ")


def test_no_other_is_a_strict_choice_in_plain_mode_and_from_an_answers_file(tmp_path):
    strict = ("ask", "-q", "Deploy?", "-o", "yes", "-o", "no", "--no-other")
    plain = dsh(*strict, "--plain", input="maybe\n2\n")
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout) == {"answers": [{"id": "q1", "selected": ["no"]}]}
    assert "answer (numbers, /skip, /back, /cancel)> maybe\n  type a number: choose 1-2\n" \
        in plain.stderr  # "maybe" is no Other answer: asked again
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"q1": "maybe"}))
    one_line(dsh(*strict, "--answers", str(answers)), 2, "dsh: INVALID_ANSWER: ")
    # the request field says the same as the flag
    request = {"questions": [{"id": "q1", "question": "Deploy?", "other": False,
                              "options": [{"label": "yes"}, {"label": "no"}]}]}
    via_file = tmp_path / "request.json"
    via_file.write_text(json.dumps(request))
    one_line(dsh("ask", str(via_file), "--answers", str(answers)), 2, "dsh: INVALID_ANSWER: ")
    one_line(dsh("ask", "-q", "Name?", "--no-other"), 2,
             "dsh: USAGE: --no-other needs the options to choose from (-o LABEL)")


def test_schema_ask_names_every_field_a_dsh_ask_request_accepts():
    from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionOption
    from dsh_cli.interaction.constraints import TextRule
    from dsh_cli.interaction.vocabulary import AskDefault

    shown = dsh("schema", "--ask")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert set(document["properties"]) == {"questions"}  # what check_request_fields takes
    item = document["properties"]["questions"]["items"]
    assert set(item["properties"]) == {*AskUserQuestionItem.model_fields, "multiSelect"}
    assert set(item["properties"]["options"]["items"]["properties"]) == set(
        AskUserQuestionOption.model_fields)
    assert set(item["properties"]["rule"]["properties"]) == set(TextRule.model_fields)
    assert set(item["properties"]["default"]["properties"]) == set(AskDefault.model_fields)
    # each of them is taken by dsh ask: one request with all of them is answered
    request = {"questions": [
        {"id": "pick", "question": "Which?", "detail": "d", "other": False, "required": True,
         "warning": "w", "multiSelect": True, "min_items": 1, "max_items": 2,
         "options": [{"label": "a", "description": "x", "preview": "p"}, {"label": "b"}]},
        {"id": "n", "question": "How many?", "default": {"custom": "3"},
         "rule": {"kind": "integer", "minimum": 1, "maximum": 9}},
    ]}
    answered = dsh("ask", "-", "--format", "json", input=json.dumps(request))
    assert answered.returncode == 3, answered.stderr  # valid; nothing here can answer it
    assert "NO_PROVIDER" in answered.stderr
    helped = dsh("schema", "--help").stdout
    assert "other, required, default" in " ".join(helped.split())
