"""Issue 27 in the terminal: option previews, notes, and the multi-select's Other warning.

Each test drives a real ``TerminalProvider`` through prompt-toolkit pipe input on a VT100
output of a fixed size and reads the screen through pyte, as a terminal would show it.
"""

from __future__ import annotations

import asyncio
import io

import pyte
import pytest
from harness.terminal_session import DOWN, ENTER, ESC, TAB, assert_fits
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionRequest, UserInteraction
from dsh_cli.providers.terminal import TerminalProvider

SHIFT_DOWN, SHIFT_UP, UP = "\x1b[1;2B", "\x1b[1;2A", "\x1b[A"
SIZES = [(120, 40), (80, 24), (40, 10), (20, 6)]
LONG = "\n".join(f"{n:02d}\tport = {8000 + n}  # 端口" for n in range(1, 61))


def layout(*extra: dict) -> AskUserQuestionItem:
    return AskUserQuestionItem(id="cfg", question="Which config?", options=[
        {"label": "Long", "preview": LONG}, {"label": "Short", "preview": "just\none"},
        {"label": "Plain"}, *extra])


class Screen:
    """A provider on a ``columns`` x ``rows`` VT100, keys by pipe, the screen by pyte."""

    def __init__(self, pipe, provider, task, stream: io.StringIO, size) -> None:
        self.pipe, self.provider, self.task, self.stream = pipe, provider, task, stream
        self.size = size

    @property
    def state(self):
        return self.provider.state

    async def keys(self, *keys: str) -> None:
        for key in keys:
            self.pipe.send_text(key)
            await asyncio.sleep(0.2 if key == ESC else 0.02)  # a lone esc waits ttimeoutlen

    def lines(self) -> list[str]:
        """What the terminal shows now (trailing blank rows dropped)."""
        screen = pyte.Screen(*self.size)
        pyte.Stream(screen).feed(self.stream.getvalue())
        shown = [line.rstrip() for line in screen.display]
        while shown and not shown[-1]:
            shown.pop()
        assert_fits(shown, self.size)
        return shown

    async def result(self):
        return (await asyncio.wait_for(self.task, 5)).to_json()


def asking(size: tuple[int, int], *questions: AskUserQuestionItem):
    """Run ``body(screen)`` with ``questions`` asked on a terminal of ``size``."""
    columns, rows = size

    def decorator(body):
        async def main():
            stream = io.StringIO()
            output = Vt100_Output(stream, lambda: Size(rows=rows, columns=columns),
                                  term="xterm")
            with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
                ui = UserInteraction()
                provider = TerminalProvider()
                ui.register_provider(provider)
                task = asyncio.ensure_future(ui.ask(AskUserQuestionRequest(
                    questions=list(questions))))
                for _ in range(300):
                    if provider.screen is not None and provider.screen.app.is_running:
                        break
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.05)
                return await asyncio.wait_for(
                    body(Screen(pipe, provider, task, stream, size)), 20)
        return asyncio.run(main())
    return decorator


def row_of(lines: list[str], text: str) -> int:
    found = [number for number, line in enumerate(lines) if text in line]
    assert found, (text, lines)
    return found[0]


# -- previews -----------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_sixty_line_preview_is_drawn_scrolled_to_its_end_and_never_hides_other(size):
    @asking(size, layout())
    async def run(screen):
        first = screen.lines()
        await screen.keys(*["J"] * 60)  # far past the end: it stops on the last line
        end = screen.lines()
        await screen.keys(DOWN)  # the preview follows the highlight
        short = screen.lines()
        await screen.keys(DOWN, DOWN, "Z")  # down onto Other, which stays a row
        other = screen.lines()
        await screen.keys(ENTER)
        return first, end, short, other, await screen.result()

    first, end, short, other, result = run
    for lines in (first, end, short):
        assert any(line.startswith(" › ") for line in lines)  # the highlight is shown
        assert row_of(lines, "Other:") < len(lines) - 1  # Other and the key line both shown
        assert "enter" in lines[-1]
    columns = size[0]
    if size == (20, 6):  # no room for it: the preview gives way, the list does not
        assert not any("port =" in line for line in first)
    else:
        top = row_of(first, "port = 8001")
        assert "1-" in first[row_of(first, " of 60")]
        assert "port = 8060" not in "\n".join(first)
        assert "  port = 8001  # 端口" in first[top]  # the tab expanded, the wide text kept
        if columns >= 100:  # beside the list: the first option and line 01 share a row
            assert top == row_of(first, "1. Long") and "│" in first[top]
        else:  # below the list, under Other
            assert top > row_of(first, "Other:")
        assert row_of(end, "of 60") > row_of(end, "60  port = 8060")
        assert "-60 of 60" in "\n".join(end) or "-60/60" in "\n".join(end)
        assert "just" in "\n".join(short) and "port =" not in "\n".join(short)
    assert "› 4. Other: Z" in "\n".join(other)
    assert result == {"answers": [{"id": "cfg", "selected": [], "custom": "Z"}]}


MIXED = "\n".join(["wide 端口 lines " * 5] * 13 + ["x"] * 13)  # long lines, then short


def drawn_afresh(screen: Screen) -> list[str]:
    """The lines a first frame of the provider's state would show."""
    from dsh_cli.providers.terminal.render import render

    shown = ["".join(text for _, text in line).rstrip()
             for line in render(screen.state, *screen.size, view=screen.provider.view)]
    while shown and not shown[-1]:
        shown.pop()
    return shown


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_frame_shows_what_a_fresh_draw_of_it_would(size):
    # a preview line, and the blank and bar beside it, are each one wide cell to the
    # renderer (runs.RunWindow): nothing an earlier frame drew may be left on screen when
    # long lines scroll to short ones, the highlight moves, or the layout loses its preview
    question = AskUserQuestionItem(id="cfg", question="Which config?", options=[
        {"label": "Mixed", "preview": MIXED}, {"label": "Short", "preview": "just\none"},
        {"label": "A label long enough to reach the bar beside it", "preview": "p"},
        {"label": "Plain"}])

    @asking(size, question)
    async def run(screen):
        frames = []
        for keys in ([], ["J"], ["K"], [DOWN], [DOWN], [DOWN], [UP, UP, UP], ["J"], [UP]):
            await screen.keys(*keys)
            frames.append((keys, screen.lines(), drawn_afresh(screen)))
        await screen.keys(ESC)
        return frames

    for keys, shown, fresh in run:
        assert shown == fresh, keys
    first = run[0][1]
    assert any("wide 端口 lines" in line for line in first)
    assert any(line.rstrip().endswith("│ x") for line in run[1][1])  # scrolled to the short


def test_shift_arrows_scroll_the_preview_from_the_other_field_and_k_scrolls_back():
    @asking((80, 24), layout())
    async def run(screen):
        await screen.keys("J", "J")
        down = screen.lines()
        await screen.keys("K", "K")
        back = screen.lines()
        await screen.keys(*[DOWN] * 3)  # Other: J would be text, shift-↓ still scrolls
        await screen.keys(DOWN, DOWN, DOWN)  # back round to the first option
        await screen.keys(TAB, SHIFT_DOWN)
        from_field = screen.provider.view.of(0).preview_offset
        await screen.keys(SHIFT_UP, ESC, ENTER)
        return down, back, from_field, await screen.result()

    down, back, from_field, result = run
    assert "port = 8001" not in "\n".join(down) and "lines 27-39 of 60" in "\n".join(down)
    assert "lines 1-" in "\n".join(back)
    assert from_field == 0  # the Other row has no preview of its own: nothing to scroll
    assert result == {"answers": [{"id": "cfg", "selected": ["Plain"]}]}


def test_a_hostile_preview_is_drawn_inert():
    hostile = "title\x1b]0;pwned\x07\n\x1b[31mred\x1b[0m\n\x1b[2Jclear"
    item = AskUserQuestionItem(id="x", question="Pick?", options=[
        {"label": "A", "preview": hostile}, {"label": "B"}])

    @asking((120, 40), item)
    async def run(screen):
        lines = screen.lines()
        raw = screen.stream.getvalue()
        await screen.keys("2")
        return lines, raw, await screen.result()

    lines, raw, result = run
    assert "]0;pwned" not in raw and "\x1b[2J" not in raw and "\x1b[31mred" not in raw
    assert "red" in "\n".join(lines) and "clear" in "\n".join(lines)
    assert result == {"answers": [{"id": "x", "selected": ["B"]}]}


# -- notes --------------------------------------------------------------------------


def test_a_note_typed_goes_on_the_answer_and_into_the_summary():
    item = AskUserQuestionItem(id="db", question="Which database?", options=[
        {"label": "PostgreSQL"}, {"label": "SQLite"}])

    @asking((100, 24), item)
    async def run(screen):
        assert "n note" in screen.lines()[-1]  # named where the key help has room
        await screen.keys("n", *"but version 16")
        field = screen.lines()
        await screen.keys(ENTER, "1")
        result = await screen.result()
        await asyncio.sleep(0.05)
        return field, result, screen.lines()

    field, result, after = run
    assert " note › but version 16" in field and "enter keep" in field[-1]
    assert result == {"answers": [{"id": "db", "selected": ["PostgreSQL"],
                                   "note": "but version 16"}]}
    assert 'PostgreSQL · note: "but version 16"' in "\n".join(after)  # the summary


def test_esc_in_the_note_field_closes_it_and_keeps_the_answer():
    questions = [AskUserQuestionItem(id=q, question=f"{q}?", options=[{"label": "Yes"},
                                                                      {"label": "No"}])
                 for q in ("a", "b")]

    @asking((80, 24), *questions)
    async def run(screen):
        await screen.keys("1", "2")  # both answered: the review
        await screen.keys("1", "n", *"why", ESC)  # back to a, a note begun, then esc
        assert not screen.state.noting
        assert screen.state.drafts[0].answer.selected == ["Yes"]
        await screen.keys("n", *"v2", ENTER)  # a note on an answer already given
        await screen.keys("\x1b[C", "\x1b[C")  # → to b, → to the review
        review = screen.lines()
        await screen.keys(ENTER)
        return review, await screen.result()

    review, result = run
    assert any('Yes · note: "v2"' in line for line in review), review
    assert result == {"answers": [{"id": "a", "selected": ["Yes"], "note": "v2"},
                                  {"id": "b", "selected": ["No"]}]}


# -- the multi-select's Other text ---------------------------------------------------


def features() -> AskUserQuestionItem:
    return AskUserQuestionItem(id="f", question="Which features?", multi_select=True,
                               options=[{"label": "Auth"}, {"label": "Billing"},
                                        {"label": "Admin"}])


@pytest.mark.parametrize("choice", ["n", ENTER])
def test_other_text_on_a_ticked_multi_select_warns_and_offers_the_note(choice):
    @asking((80, 24), features())
    async def run(screen):
        await screen.keys("1", "2", TAB, *"and SSO", ENTER)
        warned = screen.lines()
        assert screen.state.drafts[0].answer is None  # nothing recorded before the choice
        await screen.keys(choice)
        return warned, await screen.result()

    warned, result = run
    shown = " ".join(line.strip() for line in warned)
    assert "the text replaces the 2 ticked options" in shown
    assert "enter: use the text · n: keep the ticks and add it as a note" in shown
    if choice == "n":
        assert result == {"answers": [{"id": "f", "selected": ["Auth", "Billing"],
                                       "note": "and SSO"}]}
    else:
        assert result == {"answers": [{"id": "f", "selected": [], "custom": "and SSO"}]}
