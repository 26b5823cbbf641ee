"""The batch state machine: every key of spec/terminal.md, without prompt-toolkit."""

from __future__ import annotations

from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import AskUserQuestionItem
from dsh_cli.providers.terminal.state import ANSWER_FIRST, AT_LEAST_ONE, BatchState


def item(qid: str, *labels: str, multi: bool = False) -> AskUserQuestionItem:
    options = [{"label": label} for label in labels] or None
    return AskUserQuestionItem(id=qid, question=f"{qid}?", options=options, multi_select=multi)


def answers(state: BatchState) -> list[dict]:
    assert state.answer is not None
    return state.answer.to_json()["answers"]


def test_single_select_digit_chooses_and_submits_a_one_question_batch():
    state = BatchState([item("db", "PostgreSQL", "SQLite")])
    state.digit(2)
    assert answers(state) == [{"id": "db", "selected": ["SQLite"]}]


def test_arrows_wrap_through_the_other_row_and_enter_or_space_choose():
    state = BatchState([item("db", "A", "B")])
    state.up()
    assert state.draft.highlight == 2 and state.in_text  # the Other row has focus
    state.up()
    state.enter()
    assert answers(state) == [{"id": "db", "selected": ["B"]}]
    state = BatchState([item("db", "A", "B")])
    state.down()
    state.down()
    state.down()
    assert state.draft.highlight == 0
    state.space()
    assert answers(state) == [{"id": "db", "selected": ["A"]}]


def test_a_digit_past_the_other_row_gets_a_hint_and_n_plus_one_focuses_other():
    state = BatchState([item("db", "A", "B")])
    state.digit(7)
    assert state.hint == "no option 7: press 1-2, or 3 for Other"
    assert not state.done
    state.digit(0)
    assert "no option 0" in state.hint
    state.digit(3)
    assert state.in_text and state.hint is None


def test_digits_typed_in_other_are_text_and_enter_answers_custom():
    state = BatchState([item("n", "A", "B")])
    state.focus_other()
    for key in "42":
        state.digit(int(key))
    state.letter("s")  # letters are text here too, not commands
    state.space()
    state.letter("o")
    state.enter()
    assert answers(state) == [{"id": "n", "selected": [], "custom": "42s o"}]


def test_other_refuses_empty_text_and_esc_or_up_return_to_the_last_option_keeping_draft():
    state = BatchState([item("n", "A", "B")])
    state.letter("o")
    state.insert("   ")
    state.enter()
    assert not state.done and "type an answer" in state.hint
    state.insert("draft")
    state.escape()
    assert state.draft.highlight == 1 and not state.in_text and not state.done
    state.focus_other()
    state.up()
    assert state.draft.highlight == 1
    state.focus_other()
    state.down()
    assert state.draft.highlight == 0
    state.focus_other()
    assert state.draft.text == "   draft"


def test_text_field_editing_keys():
    state = BatchState([item("n")])
    state.insert("helo")
    state.left()
    state.insert("l")
    state.home()
    state.delete()
    state.end()
    state.backspace()
    state.right()
    assert state.draft.text == "ell" and state.draft.cursor == 3
    state.left()
    state.kill_before()
    assert state.draft.text == "l" and state.draft.cursor == 0
    state.insert("a\nb")  # a paste loses its line breaks
    assert state.draft.text == "a bl"


def test_multi_select_toggles_confirms_and_requires_something():
    state = BatchState([item("f", "Auth", "Billing", "Admin", multi=True)])
    state.enter()
    assert state.hint == AT_LEAST_ONE and not state.done
    state.digit(3)
    state.digit(1)
    state.space()  # toggles the highlight, option 1, off again
    state.space()
    state.down()
    state.space()
    state.space()
    assert state.draft.checked == {0, 2}
    state.enter()
    assert answers(state) == [{"id": "f", "selected": ["Auth", "Admin"]}]


def test_other_text_overrides_checked_options():
    state = BatchState([item("f", "Auth", "Billing", multi=True)])
    state.digit(1)
    state.focus_other()
    state.insert("SSO only")
    state.escape()
    state.enter()  # on the list: the first enter warns that the text replaces the checks
    assert state.answer is None and "replaces the 1 ticked option" in (state.hint or "")
    state.enter()  # the second: the text still wins over the checks
    assert answers(state) == [{"id": "f", "selected": [], "custom": "SSO only"}]


def test_optionless_question_is_a_text_field_where_esc_cancels():
    state = BatchState([item("name")])
    assert state.in_text
    state.digit(1)
    state.enter()
    assert answers(state) == [{"id": "name", "selected": [], "custom": "1"}]
    state = BatchState([item("name")])
    state.escape()
    assert state.ending is Outcome.CANCELLED and state.done


def test_skip_with_s_and_ctrl_s():
    state = BatchState([item("a", "X"), item("b")])
    state.letter("s")
    state.skip()  # ctrl-s works in the text field of b
    assert state.screen == "review"
    state.enter()
    assert answers(state) == [{"id": "a", "selected": []}, {"id": "b", "selected": []}]


def test_cancel_with_esc_on_the_list_and_ctrl_c_anywhere():
    state = BatchState([item("a", "X")])
    state.escape()
    assert state.ending is Outcome.CANCELLED
    state = BatchState([item("a", "X")])
    state.focus_other()
    state.cancel()
    assert state.ending is Outcome.CANCELLED and state.answer is None


def test_back_and_forward_keep_drafts_and_next_reaches_review_unanswered():
    state = BatchState([item("a", "X", "Y", multi=True), item("b"), item("c", "P", "Q")])
    state.digit(2)
    state.right()
    assert state.index == 1
    state.insert("half")
    state.up()  # optionless: up is the previous question
    assert state.index == 0 and state.draft.checked == {1}
    state.right()
    state.down()  # optionless b: down is the next question
    assert state.index == 2
    state.down()  # c has options: down moves the highlight
    assert state.index == 2 and state.draft.highlight == 1
    state.right()
    assert state.screen == "review"
    assert [state.status(i) for i in range(3)] == ["unanswered"] * 3
    state.left()
    assert state.index == 2 and state.screen == "question"
    state.left()
    state.left()
    assert state.index == 1 and state.draft.text == "half"


def test_review_enter_jumps_to_the_first_unanswered_and_advancing_returns_to_review():
    state = BatchState([item("a", "X"), item("b", "Y"), item("c", "Z")])
    state.digit(1)
    state.right()
    state.digit(1)
    assert state.screen == "review"
    state.enter()
    assert state.screen == "question" and state.index == 1 and state.hint == ANSWER_FIRST
    state.skip()
    assert state.screen == "review"
    state.digit(1)
    assert state.index == 0
    state.focus_other()
    state.insert("mine")
    state.enter()
    assert state.screen == "review"
    state.digit(9)
    assert "no question 9" in state.hint
    state.enter()
    assert answers(state) == [
        {"id": "a", "selected": [], "custom": "mine"},
        {"id": "b", "selected": []},
        {"id": "c", "selected": ["Z"]},
    ]


def test_review_esc_twice_cancels():
    state = BatchState([item("a", "X"), item("b", "Y")])
    state.digit(1)
    state.digit(1)
    state.escape()
    assert state.confirming and state.ending is not Outcome.CANCELLED  # one esc loses nothing
    state.escape()
    assert state.ending is Outcome.CANCELLED


def test_next_on_a_single_question_hints_and_prev_on_the_first_stays():
    state = BatchState([item("a", "X")])
    state.right()
    assert state.hint and not state.done
    state.left()
    assert state.index == 0


def test_recommended_option_is_not_preselected_and_its_label_returns_unchanged():
    state = BatchState([item("db", "PostgreSQL (Recommended)", "SQLite", multi=True)])
    assert state.draft.checked == set()
    state.enter()
    assert state.hint == AT_LEAST_ONE
    state.digit(1)
    state.enter()
    assert answers(state) == [{"id": "db", "selected": ["PostgreSQL (Recommended)"]}]


def test_nine_plus_options_are_reached_with_arrows_and_digits_stay_in_range():
    labels = [f"o{i}" for i in range(12)]
    state = BatchState([item("x", *labels)])
    state.digit(9)
    assert answers(state) == [{"id": "x", "selected": ["o8"]}]
    state = BatchState([item("x", *labels)])
    state.up()
    state.up()
    state.enter()
    assert answers(state) == [{"id": "x", "selected": ["o11"]}]


def test_a_skip_from_the_note_field_keeps_the_note_and_closes_the_field():
    state = BatchState([item("a", "A"), item("b", "B")])
    state.letter("n")
    state.insert("ask me later")
    state.skip()  # ctrl-s works in the note field as in any text field
    assert state.index == 1 and state.drafts[0].noting is None
    assert state.drafts[0].answer.to_json() == {"id": "a", "selected": [],
                                                "note": "ask me later"}
