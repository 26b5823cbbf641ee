"""Issue 16 through the application: long lists, small terminals, no lost work.

Each test drives a real ``TerminalProvider`` with prompt-toolkit pipe input on an output of
a fixed size (100x30, 40x10, 20x6) and reads the frame the application would draw.
"""

from __future__ import annotations

import re

import pytest
from harness.terminal_session import (
    CTRL_C,
    DOWN,
    END,
    ENTER,
    ESC,
    HOME,
    PGDN,
    PGUP,
    TAB,
    UP,
    ask,
    assert_fits,
    item,
    key_line,
)

from dsh_cli.interaction import (
    AskUserQuestionItem,
    UserInteractionError,
)

SIZES = [(100, 30), (40, 10), (20, 6)]
WORDS = " ".join(f"word{n}" for n in range(40))


def many(qid: str, count: int = 50, **extra) -> AskUserQuestionItem:
    options = [{"label": f"Option {n}", "description": f"about {n}"} for n in range(count)]
    return AskUserQuestionItem(id=qid, question="Pick one", options=options, **extra)


# -- the hint line ---------------------------------------------------------------------


SCREENS = {
    "single": ([], [item("db", "PostgreSQL", "SQLite"), item("name")]),
    "multi": ([], [item("f", "Auth", "Billing", "Admin UI", multi=True), item("name")]),
    "other": ([TAB], [item("f", "Auth", "Billing", multi=True)]),
    "free text": ([], [item("name")]),
    "free text in a batch": ([], [item("name"), item("db", "A")]),
    "review": (["1", "1"], [item("a", "X"), item("b", "Y")]),
    "filter": (["/", "opt"], [many("m")]),
    "confirming": (["1", ESC], [item("a", "X"), item("b", "Y")]),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_hint_line_never_wraps_and_keeps_enter_and_esc(size, screen):
    keys, questions = SCREENS[screen]

    @ask(size, *questions)
    async def frame(session):
        await session.keys(*keys)
        frame = session.frame()
        await session.keys(CTRL_C)
        with pytest.raises(UserInteractionError):
            await session.task
        return frame

    assert_fits(frame, size)
    keys_shown = key_line(frame)
    if screen == "confirming":
        assert re.search(r"esc( again)?:? (to )?discard 1", keys_shown), keys_shown
    else:
        assert re.search(r"\benter \w+", keys_shown) and re.search(r"\besc \w+", keys_shown)
    if size == (100, 30) and screen == "multi":
        assert "esc cancel" in keys_shown and "enter confirm" in keys_shown


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_small_terminals_take_rows_from_the_question_and_list_before_the_hints(size):
    long = item("q", "Alpha", "Beta", question="Which one? " * 30, header="Choice",
                detail="Some detail " * 20)

    @ask(size, long)
    async def frame(session):
        await session.keys("9")  # a hint line as well as the key help
        frame = session.frame()
        await session.keys("1")
        return frame, await session.result()

    frame, result = frame
    assert_fits(frame, size)
    assert "no option 9" in "\n".join(frame) and "esc" in key_line(frame)
    assert any("1. Alpha" in line for line in frame)  # the highlight is never given up
    assert result == {"answers": [{"id": "q", "selected": ["Alpha"]}]}


# -- long lists ---------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_home_end_pgup_pgdn_on_a_long_list(size):
    @ask(size, many("m"))
    async def run(session):
        state = session.state
        await session.keys(END)  # the last option, not Other, where keys would be text
        assert state.draft.highlight == 49 and not state.in_text
        await session.keys(PGDN)  # nor does a page go past it
        assert state.draft.highlight == 49 and not state.in_text
        await session.keys(DOWN)  # Other is reached on purpose
        assert state.draft.highlight == 50 and state.in_text
        await session.keys(UP)
        assert state.draft.highlight == 49
        await session.keys(HOME)
        assert state.draft.highlight == 0
        await session.keys(PGDN)
        page = state.draft.highlight
        assert page >= 1
        assert_fits(session.frame(), size)
        assert any(f"› {page + 1:>2}. Option {page}" in line for line in session.frame())
        await session.keys(PGDN, PGUP)
        assert state.draft.highlight == page
        await session.keys(PGUP)
        assert state.draft.highlight == 0
        await session.keys(ENTER)
        return await session.result()

    assert run == {"answers": [{"id": "m", "selected": ["Option 0"]}]}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_blank_row_at_the_top_of_a_scrolled_long_list(size):
    @ask(size, many("m"))
    async def frame(session):
        await session.keys(DOWN, UP)
        frame = session.frame()
        await session.keys(CTRL_C)
        return frame

    assert all(line.strip() for line in frame), frame
    assert not any("↑" in line and "more" in line for line in frame)
    assert any("more" in line for line in frame)  # what is hidden below is said


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_filter_narrows_keeps_numbers_and_takes_letters_as_text(size):
    questions = [many("m"), item("next", "X")]

    @ask(size, *questions)
    async def run(session):
        state = session.state
        await session.keys("/", "o", "s", TAB)  # no jump to Other, no skip
        assert state.filtering and state.draft.filter == "os" and state.index == 0
        await session.keys("\x7f", "\x7f", "OPTION 4")  # case-insensitive
        assert state.matches() == [4, *range(40, 50)]
        frame = session.frame()
        assert_fits(frame, size)
        assert any(re.search(r"› +5\. Option 4", line) for line in frame)
        assert not any("Option 3 " in line or line.endswith("Option 3") for line in frame)
        await session.keys(DOWN)
        assert state.draft.highlight == 40
        assert any("41. Option 40" in line and "›" in line for line in session.frame())
        await session.keys(UP, UP)
        assert state.draft.highlight == 49  # wraps among the matches
        await session.keys(ESC)
        assert not state.filtering and state.draft.highlight == 49  # the highlight kept
        await session.keys("/", "about 7", ENTER)  # descriptions match too; enter picks
        assert state.index == 1
        await session.keys("1", ENTER)
        return await session.result()

    assert run["answers"][0] == {"id": "m", "selected": ["Option 7"]}


def test_the_filter_in_a_multi_select_toggles_the_match_and_digits_are_text():
    @ask((40, 10), many("m", multi_select=True))
    async def run(session):
        await session.keys("/", "12", ENTER)
        assert session.state.draft.checked == {12} and not session.state.filtering
        await session.keys("/", "nothing like it", ENTER)
        assert "no option matches" in "\n".join(session.frame())
        await session.keys(ESC, ENTER)
        return await session.result()

    assert run == {"answers": [{"id": "m", "selected": ["Option 12"]}]}


# -- descriptions -------------------------------------------------------------------


def described(*rows: tuple[str, str]) -> AskUserQuestionItem:
    return AskUserQuestionItem(id="d", question="Which?", options=[
        {"label": label, "description": text} for label, text in rows])


def test_descriptions_line_up_after_the_longest_label_when_it_fits_in_half_the_width():
    question = described(("Auth", "Sign-in with OAuth"), ("Admin UI", "A dashboard"),
                         ("Billing", "Subscriptions"))

    @ask((100, 30), question)
    async def frame(session):
        frame = session.frame()
        await session.keys(CTRL_C)
        return frame

    columns = {line.index(text) for line in frame
               for text in ("Sign-in", "A dashboard", "Subscriptions") if text in line}
    assert len(columns) == 1, frame


@pytest.mark.parametrize("size", [(100, 30), (40, 10)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_descriptions_go_under_their_label_when_the_column_does_not_fit(size):
    question = described(("A rather long label for this one, which goes on and on and on",
                          "short text"), ("B", "more"))

    @ask(size, question)
    async def frame(session):
        frame = session.frame()
        await session.keys(CTRL_C)
        return frame

    label = next(i for i, line in enumerate(frame) if "1. A" in line)
    assert "short text" not in frame[label]
    assert any("short" in line for line in frame[label + 1: label + 4])


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_long_description_is_folded_then_shown_whole_and_paged_while_highlighted(size):
    question = described(("A", "first"), ("Long", WORDS), ("C", "third"))

    @ask(size, question)
    async def run(session):
        folded = session.frame()
        row = [line for line in folded if "word" in line]
        if row:  # room for it: at most three lines, the cut marked with …
            assert len(row) <= 3 and row[-1].rstrip().endswith("…")
            assert "word39" not in "\n".join(folded)
        await session.keys(DOWN)
        seen = "\n".join(session.frame())
        for _ in range(40):  # page until the end of the text is reached
            if "word39" in seen:
                break
            await session.keys(PGDN)
            assert_fits(session.frame(), size)
            seen += "\n".join(session.frame())
        assert "word39" in seen, "the end of every description is reachable"
        # a page moves by what is shown: no line of the text is jumped over
        assert set(re.findall(r"\bword\d+\b", seen)) == set(WORDS.split())
        assert session.state.draft.highlight == 1  # paging the text, not the list
        await session.keys(ENTER)
        return await session.result()

    assert run == {"answers": [{"id": "d", "selected": ["Long"]}]}


# -- no lost work -------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_enter_in_an_empty_other_field_confirms_the_ticked_options(size):
    @ask(size, item("f", "Auth", "Billing", "Admin", multi=True))
    async def run(session):
        await session.keys("1", "3", TAB, ENTER)
        return await session.result()

    assert run == {"answers": [{"id": "f", "selected": ["Auth", "Admin"]}]}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_esc_with_work_in_the_batch_asks_first_and_any_other_key_goes_back(size):
    @ask(size, item("a", "X", "Y"), item("b"), item("c", "P"))
    async def run(session):
        state = session.state
        await session.keys("1", "half a draft", UP, ESC)  # b has a draft, a an answer
        assert state.confirming and not state.done
        frame = session.frame()
        assert_fits(frame, size)
        if size == (100, 30):
            assert key_line(frame) == (
                " esc again to discard 2 answers · any other key to go back")
        await session.keys("x")  # goes back, does nothing else
        assert not state.confirming and state.drafts[1].text == "half a draft"
        await session.keys(TAB, ESC)  # the double-esc reflex: leave Other, then once more
        assert not state.confirming and not state.in_text
        await session.keys(ESC)
        assert state.confirming and not state.done
        await session.keys(ESC)
        with pytest.raises(UserInteractionError) as error:
            await session.task
        return error.value.code

    assert run == "ASK_CANCELLED"


@pytest.mark.parametrize("keys", [[ESC], ["1", CTRL_C]])
def test_nothing_answered_esc_cancels_at_once_and_ctrl_c_always_does(keys):
    @ask((40, 10), item("a", "X"), item("b", "Y"))
    async def run(session):
        await session.keys(*keys)
        with pytest.raises(UserInteractionError) as error:
            await session.task
        return error.value.code

    assert run == "ASK_CANCELLED"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_review_rows_name_a_question_by_header_else_by_its_text_cut_to_one_line(size):
    questions = [item("a", "X", header="Stack"),
                 item("b", "Y", question="Which deployment target should we use for the "
                                         "staging environment\nand later production?")]

    @ask(size, *questions)
    async def frame(session):
        await session.keys("1", "1")
        frame = session.frame()
        await session.keys(CTRL_C)
        return frame

    assert_fits(frame, size)
    first = next(line for line in frame if re.match(r"\s*1\. ", line))
    second = next(line for line in frame if re.match(r"\s*2\. ", line))
    assert "Stack" in first and "a?" not in first
    assert "Which" in second and "production" not in "\n".join(frame)
    assert "…" in second
