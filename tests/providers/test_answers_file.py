"""The answers file: every value form, validation per question, clear load errors."""

from __future__ import annotations

import asyncio

import pytest

from dsh_cli.interaction import AskContext, AskUserQuestionRequest, UserInteractionError
from dsh_cli.providers.answers_file import AnswersFileError, AnswersFileProvider

REQUEST = AskUserQuestionRequest(questions=[
    {"id": "db", "question": "DB?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]},
    {"id": "features", "question": "Features?", "multi_select": True,
     "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Admin UI"}]},
    {"id": "name", "question": "Name?"},
])
SHOWING = AskContext(REQUEST, "q_test")


def answer(data):
    return asyncio.run(AnswersFileProvider(data).ask(SHOWING)).to_json()["answers"]


def test_every_value_form():
    assert answer({"db": ["SQLite"], "features": ["Admin UI", "Auth"], "name": "acme"}) == [
        {"id": "db", "selected": ["SQLite"]},
        {"id": "features", "selected": ["Auth", "Admin UI"]},
        {"id": "name", "selected": [], "custom": "acme"},
    ]
    assert answer({"db": None, "features": {"selected": ["Billing"]},
                   "name": {"custom": " spaced "}}) == [
        {"id": "db", "selected": []},
        {"id": "features", "selected": ["Billing"]},
        {"id": "name", "selected": [], "custom": "spaced"},
    ]


def test_a_note_rides_beside_selected_custom_or_a_skip_trimmed_and_blank_dropped():
    assert answer({"db": {"selected": ["PostgreSQL"], "note": " v16 "},
                   "features": {"selected": [], "note": "later"},
                   "name": {"custom": "acme", "note": "   "}}) == [
        {"id": "db", "selected": ["PostgreSQL"], "note": "v16"},
        {"id": "features", "selected": [], "note": "later"},
        {"id": "name", "selected": [], "custom": "acme"},
    ]


def test_a_note_that_is_not_text_is_a_bad_answer():
    with pytest.raises(UserInteractionError) as caught:
        answer({"db": {"selected": ["SQLite"], "note": 16}, "features": [], "name": None})
    assert caught.value.code == "INVALID_ANSWER" and "note" in caught.value.message


def test_a_string_is_always_custom_even_when_it_equals_a_label():
    assert answer({"db": "SQLite", "features": [], "name": None})[0] == {
        "id": "db", "selected": [], "custom": "SQLite"}


@pytest.mark.parametrize("data, code, fragment", [
    ({"db": ["SQLite"], "features": []}, "NO_PROVIDER", "'name'"),
    ({"db": ["SQLite", "PostgreSQL"], "features": [], "name": None}, "INVALID_ANSWER",
     "single-select"),
    ({"db": ["Oracle"], "features": [], "name": None}, "INVALID_ANSWER", "Oracle"),
    ({"db": [], "features": ["Auth", "Auth"], "name": None}, "INVALID_ANSWER", "duplicate"),
    ({"db": [], "features": [], "name": ["x"]}, "INVALID_ANSWER", "no options"),
    ({"db": {"selected": ["SQLite"], "custom": "x"}, "features": [], "name": None},
     "INVALID_ANSWER", "together with custom"),
    ({"db": "   ", "features": [], "name": None}, "INVALID_ANSWER", "blank"),
])
def test_failures_carry_a_code_and_name_the_question(data, code, fragment):
    reports = []
    provider = AnswersFileProvider(data, source="f.json", report=reports.append)
    with pytest.raises(UserInteractionError) as caught:
        asyncio.run(provider.ask(SHOWING))
    assert caught.value.code == code and fragment in caught.value.message
    assert reports == [f"dsh: {code}: {caught.value.message}"]


def test_load_errors(tmp_path):
    for content, fragment in [("{", "not valid JSON"), ("[]", "JSON object"),
                              ('{"a": 1}', "must be a list")]:
        path = tmp_path / "a.json"
        path.write_text(content)
        with pytest.raises(AnswersFileError, match=fragment) as caught:
            AnswersFileProvider.load(path)
        assert caught.value.path == str(path) and caught.value.code == "ANSWERS_FILE_ERROR"
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe")
    with pytest.raises(AnswersFileError):
        AnswersFileProvider.load(tmp_path / "bin.json")


def test_an_id_no_question_asks_is_ignored():
    reports = []
    provider = AnswersFileProvider({"db": ["SQLite"], "features": [], "name": "acme",
                                    "license": "MIT"}, report=reports.append)
    found = asyncio.run(provider.ask(SHOWING)).to_json()["answers"]
    assert [item["id"] for item in found] == ["db", "features", "name"]
    assert reports == []


def test_every_missing_id_is_named_with_its_question():
    # an empty file is how a CI author learns the ids a model asks
    reports = []
    provider = AnswersFileProvider({"features": []}, source="a.json", report=reports.append)
    with pytest.raises(UserInteractionError) as caught:
        asyncio.run(provider.ask(SHOWING))
    assert caught.value.code == "NO_PROVIDER"
    assert caught.value.message == 'a.json has no answer for \'db\' ("DB?"), \'name\' ("Name?")'
    assert reports == [f"dsh: NO_PROVIDER: {caught.value.message}"]


FORM = AskUserQuestionRequest.model_validate({"questions": [
    {"id": "env", "question": "Environment?", "required": True, "other": False,
     "options": [{"label": "staging"}, {"label": "production"}]},
    {"id": "replicas", "question": "Replicas?", "default": {"custom": "3"},
     "rule": {"kind": "integer", "minimum": 1}},
], "source": {"name": "deploy", "message": "Configure"}})


def answer_form(data):
    return asyncio.run(AnswersFileProvider(data).ask(AskContext(FORM, "q_form")))


def test_a_missing_optional_id_takes_the_question_default():
    assert answer_form({"env": ["staging"]}).to_json()["answers"] == [
        {"id": "env", "selected": ["staging"]},
        {"id": "replicas", "selected": [], "custom": "3"},
    ]


def test_a_forms_optional_field_without_a_default_may_be_left_out_and_is_named():
    """A server's form says what it requires; a field it does not is skipped when the file
    leaves it out, and one line names it so a CI author still learns its id."""
    form = AskUserQuestionRequest.model_validate({"questions": [
        *[question.model_dump(exclude_none=True) for question in FORM.questions],
        {"id": "tags", "question": "Tags?", "multi_select": True, "other": False,
         "options": [{"label": "fast"}, {"label": "safe"}]},
    ], "source": {"name": "deploy"}})
    reports = []
    provider = AnswersFileProvider({"env": ["staging"]}, source="a.json", report=reports.append)
    answered = asyncio.run(provider.ask(AskContext(form, "q_form")))
    assert answered.to_json()["answers"] == [
        {"id": "env", "selected": ["staging"]},
        {"id": "replicas", "selected": [], "custom": "3"},
        {"id": "tags", "selected": []},
    ]
    assert reports == ['dsh: a.json leaves out \'tags\' ("Tags?"): skipped (optional)']


def test_a_models_question_left_out_is_still_missing():
    """The model's questions carry no ``required``: each one must be in the file."""
    with pytest.raises(UserInteractionError) as caught:
        answer({"db": ["SQLite"], "features": []})
    assert caught.value.code == "NO_PROVIDER" and "'name'" in caught.value.message


def test_a_required_question_without_an_entry_is_no_provider_naming_it():
    with pytest.raises(UserInteractionError) as caught:
        answer_form({"replicas": "2"})
    assert caught.value.code == "NO_PROVIDER"
    assert "'env'" in caught.value.message


@pytest.mark.parametrize(("data", "reason"), [
    ({"env": ["staging"], "replicas": "0"}, "replicas.custom: expected at least 1"),
    ({"env": "qa", "replicas": "2"}, "env.custom: this question takes one of its options"),
])
def test_values_are_checked_by_the_question_rules(data, reason):
    with pytest.raises(UserInteractionError) as caught:
        answer_form(data)
    assert caught.value.code == "INVALID_ANSWER"
    assert reason in caught.value.message


def test_a_question_text_in_a_report_line_drives_no_terminal():
    """A server's title (C1 CSI, bidi override) in the "has no answer" and "leaves out"
    lines: json.dumps escapes ESC and BEL but not these."""
    form = AskUserQuestionRequest.model_validate({"questions": [
        {"id": "a", "question": "Name\x9b31m\u202e?", "required": True},
        {"id": "b", "question": "Note\x9b2J\u2066?"},
    ], "source": {"name": "deploy"}})
    reports = []
    provider = AnswersFileProvider({}, source="a.json", report=reports.append)
    with pytest.raises(UserInteractionError):
        asyncio.run(provider.ask(AskContext(form, "q_form")))
    asyncio.run(AnswersFileProvider({"a": "x"}, source="a.json",
                                    report=reports.append).ask(AskContext(form, "q_form")))
    assert len(reports) == 2 and "leaves out" in reports[1]
    for line in reports:
        assert not any(char in line for char in "\x9b\u202e\u2066\x1b"), line
