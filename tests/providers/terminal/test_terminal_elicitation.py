"""The terminal UI with an asker's fields (an MCP server's form): every rule, drawn and keyed."""

from __future__ import annotations

from fakes.elicitation_form import ENV, REPLICAS
from harness.terminal_session import ask

from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import (
    ASK_DECLINED,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserInteractionError,
)
from dsh_cli.providers.terminal.render import _hints, key_line, render, summary
from dsh_cli.providers.terminal.state import BatchState

TAGS = {"id": "tags", "question": "Tags?", "multi_select": True, "other": False,
        "max_items": 1, "options": [{"label": "a"}, {"label": "b"}]}
TOKEN = {"id": "token", "question": "Token?", "warning": "servers must not ask for secrets"}
HEADING = "deploy asks: Configure the rollout"


def state_of(*questions, **fields) -> BatchState:
    return BatchState([AskUserQuestionItem.model_validate(q) for q in questions], **fields)


def screen(state: BatchState, width: int = 80, height: int = 24) -> list[str]:
    return ["".join(text for _, text in line) for line in render(state, width, height)]


def test_the_heading_is_drawn_above_the_question_and_the_review():
    state = state_of(ENV, heading=HEADING, review=True)
    assert screen(state)[0] == " ── deploy asks: Configure the rollout"
    state.digit(1)
    assert state.screen == "review"  # review even for one question
    lines = screen(state)
    assert lines[0] == " ── deploy asks: Configure the rollout"
    assert lines[1] == " Review · 1 question"


def test_no_other_row_when_other_is_false():
    state = state_of(ENV)
    text = "\n".join(screen(state))
    assert "Other" not in text and "tab other" not in text
    state.focus_other()
    state.letter("o")
    state.digit(3)
    assert not state.in_text and state.hint == "no option 3: press 1-2"
    state.down()
    state.down()
    assert state.draft.highlight == 0  # two rows wrap: no Other row to land on
    state.end()
    assert state.draft.highlight == 1


def test_skip_is_refused_with_a_hint_when_required_and_not_offered():
    state = state_of(ENV, TOKEN)
    assert "s skip" not in screen(state)[-1]
    assert "   required" in screen(state)
    state.letter("s")
    assert state.index == 0 and state.hint == "this question is required: it cannot be skipped"
    assert " ! this question is required: it cannot be skipped" in screen(state)


def test_the_default_is_shown_and_a_skip_records_it():
    state = state_of(REPLICAS, TOKEN)
    assert "   expects a whole number from 1 to 9 · default: 3" in screen(state)
    state.skip()
    assert state.drafts[0].answer.to_json() == {"id": "replicas", "selected": [],
                                                "custom": "3"}


def test_typed_text_is_checked_by_the_rule_and_stays_on_the_question():
    state = state_of(REPLICAS, TOKEN)
    state.insert("12")
    state.enter()
    assert (state.index, state.drafts[0].answer) == (0, None)
    lines = screen(state)
    field = next(i for i, line in enumerate(lines) if line.startswith(" › "))
    assert lines[field + 1] == " ! expected at most 9"  # the reason, right under the field
    state.backspace()
    state.enter()
    assert state.index == 1 and state.drafts[0].answer.custom == "1"


def test_a_multi_select_over_max_items_is_refused():
    state = state_of(TAGS, TOKEN)
    state.digit(1)
    state.digit(2)
    state.enter()
    assert state.index == 0 and state.hint == "choose at most 1 option"
    assert "   choose 0-1" in screen(state)


def test_the_warning_line_is_shown():
    assert " ! servers must not ask for secrets" in screen(state_of(TOKEN))


def test_the_decline_key_is_offered_only_when_declinable():
    plain = state_of(ENV, TOKEN)
    plain.letter("d")
    assert not plain.done and "decline" not in screen(plain)[-1]
    state = state_of(ENV, TOKEN, declinable=True)
    assert "d decline" in screen(state)[-1]
    state.digit(1)
    assert "ctrl-d decline" in screen(state)[-1]  # in a text field the key is ctrl-d
    state.decline()
    assert state.ending is Outcome.DECLINED and state.done
    assert summary(state, 80) == "✗ questions declined"
    review = state_of(ENV, declinable=True, review=True)
    review.digit(2)
    assert "d decline" in screen(review)[-1]
    review.letter("d")
    assert review.ending is Outcome.DECLINED


def test_the_decline_hint_keeps_to_the_width_of_the_line():
    state = state_of(ENV, TOKEN, declinable=True, heading=HEADING)
    for width in range(20, 90):
        line = key_line(_hints(state), width - 1)
        assert len(line) <= width - 1
    assert "d decline" in key_line(_hints(state), 79)


def test_the_review_of_a_form_teaches_the_decline_key_down_to_narrow_lines():
    """Other hints give way first: the review is the form's last step, where decline is."""
    review = state_of(ENV, declinable=True, review=True)
    review.digit(2)
    assert review.screen == "review"
    for width in (40, 60):
        line = screen(review, width=width, height=10)[-1]
        assert "d decline" in line and len(line) <= width, (width, line)


def ask_with_keys(keys, request):
    """The batch asked through the application by ``keys``: its answer, or the error code."""
    @ask((80, 24), request=request)
    async def answered(session):
        await session.keys(*keys)
        try:
            return await session.result()
        except UserInteractionError as error:
            return error.code
    return answered


def form(**fields):
    return AskUserQuestionRequest.model_validate(
        {"questions": [ENV, REPLICAS], "source": {"name": "deploy", "message": "Configure"},
         **fields})


def test_through_the_application_a_form_is_answered_with_rules_and_review():
    keys = ["s", "2", "x", "\r", "\x7f", "\x13", "\r"]  # refused skip, pick, bad text, default
    assert ask_with_keys(keys, form(review=True)) == {"answers": [
        {"id": "env", "selected": ["production"]},
        {"id": "replicas", "selected": [], "custom": "3"}]}


def test_through_the_application_d_and_ctrl_d_decline():
    assert ask_with_keys(["d"], form(declinable=True)) == ASK_DECLINED
    assert ask_with_keys(["1", "\x04"], form(declinable=True)) == ASK_DECLINED


def test_a_skip_on_the_terminal_shows_the_default_it_took_on_the_review():
    state = state_of(ENV, REPLICAS, review=True)
    state.digit(2)  # production
    state.skip()  # replicas: the terminal fills the default in, so the review shows it
    assert state.screen == "review"
    assert ' 2. Replicas?: "3"' in screen(state)


def test_at_20x6_a_long_typed_answer_keeps_the_heading_above_the_title():
    """The title gives up its line before who asks does, however little room is left."""
    state = state_of(ENV, REPLICAS, heading=HEADING)
    state.digit(2)
    state.insert("9" * 200)  # typing in the replicas field, far past the width
    first = screen(state, width=20, height=6)[0]
    assert not first.strip().startswith("Question"), first
