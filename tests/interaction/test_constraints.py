"""Typed free text: one rule checks and converts, whichever UI the text came from."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dsh_cli.interaction.constraints import TextRule


@pytest.mark.parametrize(("rule", "text", "problem"), [
    (TextRule(kind="integer", minimum=1, maximum=10), "3", None),
    (TextRule(kind="integer", minimum=1, maximum=10), "0", "at least 1"),
    (TextRule(kind="integer", minimum=1, maximum=10), "11", "at most 10"),
    (TextRule(kind="integer"), "2.5", "a whole number"),
    (TextRule(kind="integer"), "three", "a whole number"),
    (TextRule(kind="number"), "nan", "a finite number"),
    (TextRule(kind="number", maximum=1.5), "1.25", None),
    (TextRule(min_length=2, max_length=4), "a", "at least 2 characters"),
    (TextRule(min_length=2, max_length=4), "abcde", "at most 4 characters"),
    (TextRule(pattern="^[a-z]+$"), "abc", None),
    (TextRule(pattern="^[a-z]+$"), "ab1", "text matching the pattern ^[a-z]+$"),
    (TextRule(pattern="(unclosed"), "x", "text matching the pattern (unclosed"),
    (TextRule(format="email"), "a@b.co", None),
    (TextRule(format="email"), "a@b", "an e-mail address like name@example.com"),
    (TextRule(format="uri"), "https://x.org/a", None),
    (TextRule(format="uri"), "not a uri", "a URI like https://example.com/path"),
    (TextRule(format="date"), "2026-12-01", None),
    (TextRule(format="date"), "01/12/2026", "a date like 2026-12-01"),
    (TextRule(format="date-time"), "2026-12-01T09:30:00Z", None),
    (TextRule(format="date-time"), "tomorrow", "a date and time like 2026-12-01T09:30:00Z"),
])
def test_problems_are_said_in_words(rule, text, problem):
    assert rule.problem(text) == problem


def test_values_are_typed():
    assert TextRule(kind="integer").value(" 3 ") == 3
    assert TextRule(kind="number").value("2.5") == 2.5
    assert TextRule(kind="number").value("4") == 4
    assert TextRule().value("x") == "x"


def test_rules_describe_themselves_and_reject_unknown_fields():
    assert TextRule(kind="integer", minimum=1, maximum=5).describe() == \
        "a whole number from 1 to 5"
    assert TextRule(format="email", max_length=40).describe() == \
        "an e-mail address, 0-40 characters"
    with pytest.raises(ValidationError):
        TextRule(kind="string", frobnicate=True)


def test_a_pattern_that_backtracks_is_given_up_on_in_bounded_time_and_asked_again():
    """Python's re would take hours on this; the check says why and the human retypes."""
    rule = TextRule(pattern="^(a|aa)+$")
    assert rule.problem("a" * 20) is None
    assert rule.problem("a" * 60 + "!") == ("a shorter answer (this one could not be checked "
                                            "against the pattern in time)")


def test_a_repeat_inside_a_repeat_is_an_ordinary_pattern():
    rule = TextRule(pattern="^[a-z]+(-[a-z]+)*$")
    assert rule.problem("my-new-service") is None
    assert rule.problem("My Service") == "text matching the pattern ^[a-z]+(-[a-z]+)*$"


def test_one_answer_checked_again_gets_the_same_verdict():
    """The provider, the seam and the form's content check an answer in turn: a verdict
    reached near the time limit must not change between them."""
    from dsh_cli.interaction import constraints

    rule = TextRule(pattern="^(a|aa)+$")
    first = rule.problem("a" * 61 + "!")
    hits = constraints._pattern_problem.cache_info().hits
    assert rule.problem("a" * 61 + "!") == first
    assert constraints._pattern_problem.cache_info().hits == hits + 1

