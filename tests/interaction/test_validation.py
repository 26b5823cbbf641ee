"""Request rules, sanity caps and answer semantics of ``spec/questions.md``."""

from __future__ import annotations

import pytest

from dsh_cli.interaction import (
    EMPTY_QUESTIONS,
    INVALID_ANSWER,
    INVALID_QUESTIONS,
    AskUserQuestionAnswer,
    UserInteraction,
    UserInteractionError,
    check_questions,
    validate_answer,
)


def q(id="q", question="Which?", options=None, **extra):
    item = {"id": id, "question": question, **extra}
    if options is not None:
        item["options"] = [o if isinstance(o, dict) else {"label": o} for o in options]
    return item


@pytest.fixture
def rejected(probe, run, request_of):
    """``rejected(*questions)``: the error ``ask`` raised; asserts no provider saw the batch."""

    def ask(*questions):
        async def main():
            ui = UserInteraction()
            provider = probe()
            ui.register_provider(provider)
            with pytest.raises(UserInteractionError) as caught:
                await ui.ask(request_of(*questions))
            assert provider.requests == []
            return caught.value

        return run(main())

    return ask


@pytest.fixture
def accepted(probe, run, request_of):
    """``accepted(*questions)``: the batch reaches the provider (skipped answers returned)."""

    def ask(*questions):
        async def main():
            ui = UserInteraction()
            skip_all = {"answers": [{"id": item["id"], "selected": []} for item in questions]}
            provider = probe(AskUserQuestionAnswer.model_validate(skip_all))
            ui.register_provider(provider)
            answer = await ui.ask(request_of(*questions))
            assert len(provider.requests) == 1
            return answer

        return run(main())

    return ask


def assert_invalid(error, path, *words):
    assert error.code == INVALID_QUESTIONS
    assert error.message.startswith(f"{path}: "), error.message
    for word in words:
        assert word in error.message.lower(), error.message


# -- empty ------------------------------------------------------------------------------


def test_empty_batch_is_empty_questions(rejected):
    assert rejected().code == EMPTY_QUESTIONS


def test_check_questions_raises_empty_questions(request_of):
    with pytest.raises(UserInteractionError) as caught:
        check_questions(request_of())
    assert caught.value.code == EMPTY_QUESTIONS


# -- one test per rule --------------------------------------------------------------------


def test_id_must_not_be_empty(rejected):
    assert_invalid(rejected(q(id="a"), q(id="")), "questions[1].id", "empty")


def test_id_must_be_unique_within_the_batch(rejected):
    assert_invalid(rejected(q(id="db"), q(id="name"), q(id="db")), "questions[2].id",
                   "duplicate", '"db"')


def test_same_id_in_two_batches_is_fine(accepted):
    assert accepted(q(id="db")).answers[0].id == "db"
    assert accepted(q(id="db")).answers[0].id == "db"


@pytest.mark.parametrize("line_break", ["\n", "\r", "\r\n", "\u2028"])
def test_id_must_be_one_line(rejected, line_break):
    assert_invalid(rejected(q(id=f"a{line_break}b")), "questions[0].id", "one line")


@pytest.mark.parametrize("control", ["\x00", "\x07", "\x1b", "\x7f", "\x9b"])
def test_id_must_not_contain_control_characters(rejected, control):
    assert_invalid(rejected(q(id=f"a{control}b")), "questions[0].id", "control")


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_question_must_not_be_empty_after_trimming(rejected, text):
    assert_invalid(rejected(q(id="a"), q(id="b", question=text)), "questions[1].question",
                   "empty")


@pytest.mark.parametrize("label", ["", "   "])
def test_label_must_not_be_empty_after_trimming(rejected, label):
    error = rejected(q(options=["A", label]))
    assert_invalid(error, "questions[0].options[1].label", "empty")


def test_label_must_be_unique_within_its_question(rejected):
    error = rejected(
        q(id="lang", options=["Python", "Go"]),
        q(id="db", options=["PostgreSQL", "MySQL", "SQLite", "SQLite"]),
    )
    assert error.code == INVALID_QUESTIONS
    assert error.message == 'questions[1].options[3].label: duplicate label "SQLite"'


def test_the_same_label_in_two_questions_is_fine(accepted):
    answer = accepted(q(id="a", options=["Yes", "No"]), q(id="b", options=["Yes", "No"]))
    assert [item.id for item in answer.answers] == ["a", "b"]


@pytest.mark.parametrize("line_break", ["\n", "\r", "\u2028"])
def test_label_must_be_one_line(rejected, line_break):
    error = rejected(q(options=["A", "B", f"C{line_break}D"]))
    assert_invalid(error, "questions[0].options[2].label", "one line")


@pytest.mark.parametrize("control", ["\x00", "\x08", "\x1b", "\x7f", "\x9b"])
def test_label_must_not_contain_control_characters(rejected, control):
    error = rejected(q(options=[f"A{control}[31m"]))
    assert_invalid(error, "questions[0].options[0].label", "control")


@pytest.mark.parametrize("line_break", ["\n", "\r"])
def test_header_must_be_one_line(rejected, line_break):
    error = rejected(q(header=f"Data{line_break}base"))
    assert_invalid(error, "questions[0].header", "one line")


@pytest.mark.parametrize("control", ["\x1b", "\x07", "\x9d"])
def test_header_must_not_contain_control_characters(rejected, control):
    error = rejected(q(header=f"Data{control}base"))
    assert_invalid(error, "questions[0].header", "control")


def test_multi_line_question_and_detail_are_allowed(accepted):
    answer = accepted(q(question="Which one?\nThink twice.", detail="line 1\nline 2\tend"))
    assert answer.answers[0].skipped


def test_multi_select_on_an_optionless_question_is_ignored(probe, run, request_of):
    async def main():
        ui = UserInteraction()
        reply = AskUserQuestionAnswer.model_validate(
            {"answers": [{"id": "name", "selected": [], "custom": "acme"}]}
        )
        ui.register_provider(probe(reply))
        return await ui.ask(request_of(q(id="name", multi_select=True)))

    assert run(main()).answers[0].custom == "acme"


# -- sanity caps: the limit itself passes, one more fails ---------------------------------


def test_at_most_20_questions(accepted, rejected):
    assert len(accepted(*[q(id=f"q{n}") for n in range(20)]).answers) == 20
    assert_invalid(rejected(*[q(id=f"q{n}") for n in range(21)]), "questions", "20")


def test_at_most_50_options_per_question(accepted, rejected):
    accepted(q(options=[f"o{n}" for n in range(50)]))
    error = rejected(q(id="a"), q(id="b", options=[f"o{n}" for n in range(51)]))
    assert_invalid(error, "questions[1].options", "50")


def test_at_most_200_characters_per_label(accepted, rejected):
    accepted(q(options=["x" * 200]))
    assert_invalid(rejected(q(options=["ok", "x" * 201])), "questions[0].options[1].label",
                   "200")


def test_at_most_80_characters_per_header(accepted, rejected):
    accepted(q(header="h" * 80))
    assert_invalid(rejected(q(header="h" * 81)), "questions[0].header", "80")


def test_at_most_4000_characters_per_question(accepted, rejected):
    accepted(q(question="w" * 4000))
    assert_invalid(rejected(q(question="w" * 4001)), "questions[0].question", "4000")


def test_at_most_4000_characters_per_detail(accepted, rejected):
    accepted(q(detail="d" * 4000))
    assert_invalid(rejected(q(detail="d" * 4001)), "questions[0].detail", "4000")


def test_at_most_1000_characters_per_description(accepted, rejected):
    accepted(q(options=[{"label": "A", "description": "d" * 1000}]))
    error = rejected(q(options=["A", {"label": "B", "description": "d" * 1001}]))
    assert_invalid(error, "questions[0].options[1].description", "1000")


# -- answers --------------------------------------------------------------------------------

DB = q(id="db", options=["PostgreSQL", "MySQL", "SQLite"])
FEATURES = q(id="features", options=["auth", "billing", "search"], multi_select=True)
NAME = q(id="name", question="Project name?")


@pytest.fixture
def batch(request_of):
    return request_of(DB, FEATURES, NAME)


def answers(*items):
    return {"answers": list(items)}


def test_a_complete_batch_is_returned_in_question_order(batch):
    answer = validate_answer(batch, answers(
        {"id": "db", "selected": ["SQLite"]},
        {"id": "features", "selected": ["auth", "search"]},
        {"id": "name", "selected": [], "custom": "acme"},
    ))
    assert answer.to_json() == answers(
        {"id": "db", "selected": ["SQLite"]},
        {"id": "features", "selected": ["auth", "search"]},
        {"id": "name", "selected": [], "custom": "acme"},
    )


def test_multi_select_labels_are_put_in_option_order(batch):
    answer = validate_answer(batch, answers(
        {"id": "db", "selected": []},
        {"id": "features", "selected": ["search", "auth", "billing"]},
        {"id": "name", "selected": []},
    ))
    assert answer.answers[1].selected == ["auth", "billing", "search"]


def test_custom_is_trimmed(batch):
    answer = validate_answer(batch, answers(
        {"id": "db", "selected": [], "custom": "  CockroachDB \n"},
        {"id": "features", "selected": []},
        {"id": "name", "selected": [], "custom": "\tacme "},
    ))
    assert [item.custom for item in answer.answers] == ["CockroachDB", None, "acme"]


def test_custom_overrides_choices_and_leaves_selected_empty(batch):
    answer = validate_answer(batch, answers(
        {"id": "db", "selected": [], "custom": "DuckDB"},
        {"id": "features", "selected": [], "custom": "everything"},
        {"id": "name", "selected": []},
    ))
    assert answer.answers[0].to_json() == {"id": "db", "selected": [], "custom": "DuckDB"}
    assert answer.answers[1].selected == []


def test_explicit_skips_complete_the_batch(batch):
    answer = validate_answer(batch, answers(
        {"id": "db", "selected": []},
        {"id": "features", "selected": []},
        {"id": "name", "selected": []},
    ))
    assert [item.to_json() for item in answer.answers] == [
        {"id": "db", "selected": []},
        {"id": "features", "selected": []},
        {"id": "name", "selected": []},
    ]
    assert all(item.skipped for item in answer.answers)


def test_returned_labels_are_never_altered(request_of):
    labels = ["PostgreSQL (Recommended)", "数据库 🙂", "Zero\u200bwidth"]
    request = request_of(q(id="db", options=labels, multi_select=True))
    answer = validate_answer(request, answers({"id": "db", "selected": labels[::-1]}))
    assert answer.answers[0].selected == labels


SKIPS = [{"id": "features", "selected": []}, {"id": "name", "selected": []}]

INVALID_ANSWERS = {
    "wrong id": [{"id": "database", "selected": []}, *SKIPS],
    "missing item": [{"id": "db", "selected": []}, {"id": "features", "selected": []}],
    "extra item": [{"id": "db", "selected": []}, *SKIPS, {"id": "extra", "selected": []}],
    "reordered items": [SKIPS[0], {"id": "db", "selected": []}, SKIPS[1]],
    "no items": [],
    "unknown label": [{"id": "db", "selected": ["Oracle"]}, *SKIPS],
    "label in wrong case": [{"id": "db", "selected": ["sqlite"]}, *SKIPS],
    "duplicate label": [
        {"id": "db", "selected": []},
        {"id": "features", "selected": ["auth", "auth"]},
        SKIPS[1],
    ],
    "several labels on a single-select": [{"id": "db", "selected": ["MySQL", "SQLite"]},
                                          *SKIPS],
    "labels together with custom": [{"id": "db", "selected": ["MySQL"], "custom": "x"},
                                    *SKIPS],
    "empty custom": [{"id": "db", "selected": [], "custom": ""}, *SKIPS],
    "blank custom": [{"id": "db", "selected": [], "custom": "  \t"}, *SKIPS],
    "label on an optionless question": [
        {"id": "db", "selected": []},
        SKIPS[0],
        {"id": "name", "selected": ["acme"]},
    ],
}


@pytest.mark.parametrize("items", INVALID_ANSWERS.values(), ids=INVALID_ANSWERS.keys())
def test_invalid_answer(batch, items):
    with pytest.raises(UserInteractionError) as caught:
        validate_answer(batch, answers(*items))
    assert caught.value.code == INVALID_ANSWER
    assert caught.value.message.startswith("answers")


def test_invalid_answer_names_the_item_path(batch):
    with pytest.raises(UserInteractionError) as caught:
        validate_answer(batch, answers({"id": "db", "selected": ["Oracle"]}, *SKIPS))
    assert caught.value.message.startswith("answers[0]")
    assert "Oracle" in caught.value.message


@pytest.mark.parametrize("shape", [None, "text", {"answers": "nope"}, {"answers": [{"x": 1}]}],
                         ids=["none", "string", "answers-not-list", "item-without-id"])
def test_an_answer_of_the_wrong_shape_is_invalid(batch, shape):
    with pytest.raises(UserInteractionError) as caught:
        validate_answer(batch, shape)
    assert caught.value.code == INVALID_ANSWER


def test_a_refused_answer_names_its_index_for_every_ui():
    """``failing_answer`` reads back the path ``validate_answer`` writes, not another's."""
    from dsh_cli.core.errors import UserInteractionError
    from dsh_cli.interaction import AskUserQuestionRequest
    from dsh_cli.interaction.validation import failing_answer, validate_answer

    request = AskUserQuestionRequest.model_validate({"questions": [
        {"id": "a", "question": "A?"}, {"id": "b", "question": "B?", "required": True}]})
    try:
        validate_answer(request, {"answers": [{"id": "a", "selected": []},
                                              {"id": "b", "selected": []}]})
    except UserInteractionError as error:
        assert failing_answer(error.message) == 1
    else:
        raise AssertionError("a skipped required question was accepted")
    assert failing_answer("b cannot be declined: answer or cancel it") is None
    assert failing_answer(None) is None


def test_the_skip_and_review_rules_are_the_seams():
    from dsh_cli.interaction import AskUserQuestionRequest

    one = AskUserQuestionRequest.model_validate({"questions": [
        {"id": "a", "question": "A?", "required": True, "default": {"selected": ["x", "y"]},
         "options": [{"label": "x"}, {"label": "y"}], "multi_select": True}]})
    item = one.questions[0]
    assert item.can_skip and item.skipped_text() == "skipped (default: x, y)"
    assert not one.reviewed and one.model_copy(update={"review": True}).reviewed
    required = item.model_copy(update={"default": None})
    assert not required.can_skip and required.skipped_text() == "skipped"
