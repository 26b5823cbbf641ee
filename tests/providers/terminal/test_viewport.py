"""Issue 37: the renderer writes only into its ``Viewport``; ``BatchState`` keeps what the
human did, so drawing the same batch at another size changes none of it."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionOption
from dsh_cli.providers.terminal.render import render
from dsh_cli.providers.terminal.state import BatchState, Draft

SIZES = [(120, 40), (80, 24), (40, 10), (20, 6)]
LONG = "\n".join(f"{n:02d}\tport = {8000 + n}" for n in range(1, 61))


def what_the_human_did(state: BatchState) -> dict:
    """Every field of the state and its drafts (``_haystacks``: the filter's memo of the
    questions' own text, the same at any size)."""
    return copy.deepcopy({name: value for name, value in vars(state).items()
                          if not name.startswith("_")})


def long_text() -> BatchState:
    options = [AskUserQuestionOption(label=f"option {n}", description="why " * 60)
               for n in range(40)]
    return BatchState([AskUserQuestionItem(id="q", question="word " * 200, detail="more " * 80,
                                           options=options)])


def previews() -> BatchState:
    return BatchState([AskUserQuestionItem(id="cfg", question="Which config?", options=[
        {"label": "Long", "preview": LONG}, {"label": "Short", "preview": "just\none"},
        {"label": "Plain"}])])


def filtered() -> BatchState:
    state = long_text()
    state.letter("/")
    state.insert("option 3")
    return state


def review() -> BatchState:
    state = BatchState([AskUserQuestionItem(id=f"q{n}", question=f"Question {n}? " * 8)
                        for n in range(30)], review=True)
    for _ in range(30):
        state.skip()
    assert state.screen == "review"
    for _ in range(29):  # scrolled down the rows, as far as a tall screen would clamp them
        state.down()
    return state


BATCHES = {"long text": long_text, "previews": previews, "filtered": filtered,
           "review": review}


@pytest.mark.parametrize("make", list(BATCHES.values()), ids=list(BATCHES))
def test_drawing_at_another_size_leaves_the_state_as_the_human_left_it(make):
    state = make()
    before = what_the_human_did(state)
    for width, height in [*SIZES, *reversed(SIZES)]:
        render(state, width, height)
        assert what_the_human_did(state) == before, (width, height)


SCROLLS = {"long text": lambda state, view: state.page(1, view),
           "previews": lambda state, view: state.letter("J", view),
           "filtered": lambda state, view: state.page(1, view),
           "review": lambda state, view: [state.down(view), state.page(1, view)]}


@pytest.mark.parametrize("name", list(BATCHES))
def test_scrolling_moves_the_viewport_and_drawing_it_changes_no_choice(name):
    from dsh_cli.providers.terminal.viewport import Viewport

    state, view = BATCHES[name](), Viewport()
    render(state, 40, 10, view=view)
    SCROLLS[name](state, view)
    before = what_the_human_did(state)
    first = render(state, 40, 10, view=view)
    assert first != render(state, 40, 10), "the scroll is the viewport's, not the state's"
    for width, height in SIZES:
        render(state, width, height, view=view)
        assert what_the_human_did(state) == before, (width, height)


def test_a_draft_holds_no_field_of_the_viewport():
    from dsh_cli.providers.terminal.viewport import QuestionView, Viewport

    drawn = {f.name for f in dataclasses.fields(QuestionView)} | {
        f.name for f in dataclasses.fields(Viewport)}
    assert not drawn & {f.name for f in dataclasses.fields(Draft)}
    assert not drawn & set(vars(review()))


def test_a_paged_description_starts_over_once_the_highlight_moved_even_between_frames():
    from dsh_cli.providers.terminal.viewport import Viewport

    options = [AskUserQuestionOption(label=f"o{n}", description=" ".join(
        f"w{n}.{i}" for i in range(80))) for n in range(3)]
    state, view = BatchState([AskUserQuestionItem(id="q", question="Pick?",
                                                  options=options)]), Viewport()

    def shown() -> str:
        return "\n".join("".join(text for _, text in line)
                         for line in render(state, 40, 10, view=view))

    assert "lines 1-6 of 16" in shown()
    state.page(1, view)
    assert "lines 7-12 of 16" in shown()
    state.down()
    state.up()  # back on the same option before a frame was drawn: the move still counts
    assert "lines 1-6 of 16" in shown()
