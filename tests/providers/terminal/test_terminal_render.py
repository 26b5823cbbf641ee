"""The rendering: hostile text inert, display-width wrapping, visible rows only, badges."""

from __future__ import annotations

import pytest

from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionOption
from dsh_cli.providers.terminal import render as render_module
from dsh_cli.providers.terminal.render import render, summary
from dsh_cli.providers.terminal.state import BatchState
from dsh_cli.providers.terminal.text import cell_width, wrap
from dsh_cli.providers.terminal.viewport import Viewport


def text_of(lines) -> list[str]:
    return ["".join(text for _, text in line) for line in lines]


def screen(state: BatchState, width: int = 80, height: int = 24, **kw) -> list[str]:
    return text_of(render(state, width, height, **kw))


HOSTILE = "Pick\x1b]0;PWNED\x07 one\x1b[2J\u202eevil\u2066\u200b\x07\x9b31m"


def test_hostile_text_is_rendered_inert_everywhere():
    question = AskUserQuestionItem(
        id="q", question=HOSTILE, header="H\x1b[31mdr", detail="d\x1bPdcs\x1b\\etail",
        options=[{"label": "A\x1b[1mB", "description": "x\u202ey\x1b]8;;http://e\x07"}])
    state = BatchState([question, AskUserQuestionItem(id="r", question="next")])
    state.focus_other()
    state.insert("typed\x1b[2J")
    rendered = "\n".join(screen(state))
    for bad in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200b", "PWNED"):
        assert bad not in rendered
    assert "AB" in rendered and "typed" in rendered
    state.enter()
    state.skip()
    review = "\n".join(screen(state))
    assert "\x1b" not in review and "Hdr" in review and '"typed"' in review
    assert state.answer is None  # the answer keeps the human's text as typed
    assert state.drafts[0].answer.custom == "typed\x1b[2J"


@pytest.mark.parametrize("width", [20, 33, 50])
def test_cjk_and_emoji_wrap_by_display_width_and_nothing_is_lost(width):
    text = "名前は何ですか日本語のテキストを折り返します🎉🎉🎉 and some plain words here"
    lines = text_of(wrap([("", text)], width - 1, indent=0))
    assert all(cell_width(line) <= width - 1 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert len(lines) > 1


def test_every_rendered_line_fits_a_narrow_terminal():
    question = AskUserQuestionItem(
        id="q", header="見出し", question="絵文字🎉を含む長い質問文です。" * 4,
        options=[{"label": "選択肢" * 10, "description": "説明🎉" * 10}, {"label": "B"}],
        multi_select=True)
    state = BatchState([question])
    for line in screen(state, width=24, height=40):
        assert cell_width(line) <= 23, line
    joined = "".join(screen(state, width=24, height=40)).replace(" ", "")
    assert "選択肢" * 10 in joined  # wrapped, not cut


def test_short_terminal_pages_a_long_question_and_says_what_is_hidden():
    question = AskUserQuestionItem(id="q", question="word " * 200, options=[{"label": "A"}])
    state, view = BatchState([question]), Viewport()
    lines = screen(state, width=40, height=12, view=view)
    assert len(lines) <= 12
    assert any("pgup/pgdn" in line for line in lines)
    assert any("1. A" in line for line in lines)
    state.page(+1, view)
    assert screen(state, width=40, height=12, view=view) != lines


def test_thousand_options_render_only_visible_rows(monkeypatch):
    options = [AskUserQuestionOption(label=f"option {i}") for i in range(1000)]
    state = BatchState([AskUserQuestionItem(id="x", question="Pick", options=options)])
    calls = []
    original = render_module._option_row
    monkeypatch.setattr(render_module, "_option_row",
                        lambda s, i, w: calls.append(i) or original(s, i, w))
    lines = screen(state, height=24)
    assert len(lines) <= 24 and len(calls) < 30
    assert any("↓ 9" in line and "more" in line for line in lines)
    state.up()
    state.up()
    calls.clear()
    lines = screen(state, height=24)
    assert any("› 1000. option 999" in line for line in lines)
    assert any("↑ 9" in line for line in lines) and len(calls) < 60


def test_recommended_badge_strips_the_suffix_for_display_only():
    question = AskUserQuestionItem(id="db", question="DB?", options=[
        {"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}])
    lines = screen(BatchState([question]))
    row = next(line for line in lines if "PostgreSQL" in line)
    assert "Recommended" in row and "(Recommended)" not in row
    assert "[x]" not in "".join(lines)


def test_state_is_shown_by_glyphs_not_color():
    question = AskUserQuestionItem(id="f", question="F?", multi_select=True,
                                   options=[{"label": "Auth"}, {"label": "Billing"}])
    state = BatchState([question])
    state.digit(2)
    lines = screen(state)
    assert "   1. [ ] Auth" in lines and " › 2. [x] Billing" in lines
    assert "   3. Other:" in "\n".join(lines)


def test_hint_countdown_and_key_help_lines():
    state = BatchState([AskUserQuestionItem(id="a", question="A?", options=[{"label": "x"}])])
    state.digit(5)
    lines = screen(state, countdown="⏱ 9s left")
    assert any(line.startswith(" ! no option 5") for line in lines)
    assert any("⏱ 9s left" in line for line in lines)
    assert "esc cancel" in lines[-1]


def test_summary_line():
    state = BatchState([AskUserQuestionItem(id="a", question="A?", header="DB",
                                            options=[{"label": "x (Recommended)"}]),
                        AskUserQuestionItem(id="b", question="Name?")])
    state.digit(1)
    state.skip()
    state.enter()
    assert summary(state, 80) == "✓ DB: x · Name?: skipped"
    assert summary(state, 80, "aborted") == "✗ questions aborted"
    assert cell_width(summary(state, 10)) <= 20


def test_a_long_list_keeps_to_a_few_rows_on_a_tall_terminal_and_follows_the_highlight():
    options = [AskUserQuestionOption(label=f"option {n}") for n in range(100)]
    state = BatchState([AskUserQuestionItem(id="q", question="Pick", options=options)])
    lines = screen(state, height=60)
    rows = [line for line in lines if "option " in line]
    assert len(rows) <= render_module.MAX_LIST_ROWS
    assert any("more" in line for line in lines), "what is hidden is said, not cut silently"
    for _ in range(40):
        state.down()
    lines = screen(state, height=60)
    assert any("›" in line and "41. option 40" in line for line in lines)
