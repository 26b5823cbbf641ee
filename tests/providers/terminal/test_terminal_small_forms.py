"""An MCP server's form on the smallest terminal (20x6) through the application: who asks,
the highlighted option and every line of a field's rule stay reachable, and no frame is
taller than the terminal.
"""

from __future__ import annotations

import unicodedata

import pytest
from harness.terminal_session import DOWN, END, ENTER, ESC, PGDN, Session, ask, assert_fits

from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import AskUserQuestionRequest
from dsh_cli.mcp_client.forms.elicitation import build_request, form_fields
from dsh_cli.mcp_client.forms.url_mode import consent_question, parse_page
from dsh_cli.providers.terminal.render import _text, render
from dsh_cli.providers.terminal.state import BatchState
from dsh_cli.providers.terminal.viewport import Viewport

SMALL = (20, 6)
TARGET = {"type": "object", "required": ["env"], "properties": {
    "env": {"type": "string", "title": "Environment", "enum": ["staging", "production", "canary"]},
    "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 9,
                 "default": 2}}}
NEW_NAME = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "title": "New name", "minLength": 3,
             "pattern": "^[a-z][a-z0-9-]*$"}}}
LONG = "a very long colour name that goes on and on until the end"
COLOUR = {"type": "object", "properties": {
    "colour": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue", LONG]},
    "shade": {"type": "string", "title": "Shade"}}}


def form(server: str, message: str, schema: dict) -> AskUserQuestionRequest:
    return build_request(server, message, [made.question for made in form_fields(schema)])


def on_small_terminal(request: AskUserQuestionRequest):
    """Run ``body(session)`` with ``request`` shown by the application at 20x6."""
    return ask(SMALL, request=request)


def frame_of(session: Session) -> list[str]:
    frame = session.frame()
    assert_fits(frame, SMALL)
    assert frame[0].startswith(" ── forms asks:"), frame  # who asks stays on top
    return frame


def test_at_20x6_the_highlighted_option_stays_on_screen_and_the_rest_is_counted():
    @on_small_terminal(form("forms", "Where should it go? Approve the deploy?", TARGET))
    async def run(session):
        frame = frame_of(session)
        assert frame[0] == " ── forms asks: Wh…"  # one line, the cut marked
        assert " › 1. staging" in frame and "   ↓ 2 more" in frame
        await session.keys(DOWN)
        frame = frame_of(session)
        assert " › 2. production" in frame and "   ↑ 1 ↓ 1 more" in frame
        await session.keys("/")  # the filter line takes a row: the highlight keeps one
        frame = frame_of(session)
        assert any(line.startswith(" / ") for line in frame)
        assert " › 2. production" in frame
        await session.keys("s", "t")
        assert " › 1. staging" in frame_of(session)
        await session.keys(ENTER)
        assert session.state.drafts[0].answer.selected == ["staging"]
        await session.keys(ESC, ESC)  # a draft is there: the first esc only asks
        return session.state.ending is Outcome.CANCELLED

    assert run is True


def test_at_20x6_pgdn_shows_every_line_of_a_fields_rule():
    @on_small_terminal(form("forms", "Rename the service", NEW_NAME))
    async def run(session):
        lines: list[str] = []
        for _ in range(12):
            for line in frame_of(session)[1:-2]:  # between the heading and the field
                if line not in lines and not line.startswith(" … "):  # the "lines" note
                    lines.append(line)
            await session.keys(PGDN)
        await session.keys(ENTER)
        return lines

    text = " ".join(" ".join(run).split())
    # every line of the rule was on screen, in order: paging jumped over none
    assert "expects at least 3 characters, matching ^[a-z][ a-z0-9-]*$ · required" in text


def test_at_20x6_a_long_option_at_the_end_of_the_list_keeps_to_the_frame():
    @on_small_terminal(form("forms", "Please provide inputs for the following fields:", COLOUR))
    async def run(session):
        await session.keys(END)
        frame = frame_of(session)
        assert any(line.startswith(" › 4. a very") for line in frame), frame
        assert "   ↑ 3 more" in frame
        seen = "\n".join(frame)
        for _ in range(12):
            await session.keys(PGDN)
            seen += "\n".join(frame_of(session))
        await session.keys(ENTER)
        return seen, session.state.drafts[0].answer.selected

    seen, chosen = run
    assert "the end" in seen and chosen == [LONG]


# within the seam's 4,000 characters for a message (a longer one is cut, the cut marked)
HOSTILE = ("\x1b]0;owned\x07\x1b[2J\u202e\u2066 数据🎉" * 40 + "word " * 600 + "THE-END")


def screen_of(state: BatchState, width: int, height: int, view: Viewport | None = None
              ) -> list[str]:
    lines = ["".join(text for _, text in line) for line in render(state, width, height,
                                                                  view=view)]
    assert_fits(lines, (width, height))
    for line in lines:  # nothing a terminal would act on: no controls, no bidi overrides
        assert not any(unicodedata.category(char) in ("Cc", "Cf") for char in line), line
    return lines


@pytest.mark.parametrize("size", [(100, 30), (40, 10), (20, 6)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_message_too_long_for_the_heading_is_read_whole_by_paging(size):
    request = form("forms", HOSTILE, {"type": "object", "properties": {
        "title": {"type": "string", "title": "标题🎉" * 30 + "\x1b[5m", "enum": ["a", "b"]}}})
    state = BatchState(list(request.questions), heading=request.heading(),
                       declinable=request.declinable, review=request.review)
    view = Viewport()
    first = screen_of(state, *size, view)
    assert first[0].startswith(" ── forms asks:")
    assert first[0].endswith("…") or first[1].endswith("…")  # the heading's cut is marked
    seen = "\n".join(first)
    for _ in range(400):
        if "THE-END" in seen:
            break
        state.page(1, view)
        seen += "\n".join(screen_of(state, *size, view))
    assert "THE-END" in seen, "the end of the server's message is reachable"
    assert state.draft.highlight == 0  # paging the text, not the list


PUNY = "https://xn--pypal-4ve.com/" + "very/long/path/" * 8 + "?token=" + "x" * 60


@pytest.mark.parametrize("size", [(40, 10), (20, 6)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_url_consent_pages_its_whole_text_then_the_options_description(size):
    question = consent_question("u", parse_page(PUNY), "Please sign in at the page below")
    request = build_request("everything", "Please sign in at the page below", [question])
    state = BatchState(list(request.questions), heading=request.heading(),
                       declinable=request.declinable, review=request.review)
    view = Viewport()
    def lines(width: int, height: int) -> list[str]:  # a line shown alone ends in "…"
        return [line.strip(" …") for line in screen_of(state, width, height, view)]

    # the question's whole text as wrapped on this screen (a line at a time at 20x6: a
    # cell narrower, for the "…")
    narrow = size[0] - 1 - (size[1] == 6)
    whole = ["".join(text for _, text in line).strip(" …")
             for line in _text(state, narrow, heading_cut=False)]
    seen = set(lines(*size))
    for _ in range(100):
        state.page(1, view)
        seen.update(lines(*size))
    assert state.draft.highlight == 0
    missed = [line for line in whole if line not in seen]
    assert not missed, "every line of the URL, its host, the warnings and the message"
    assert "reads as 'pаypal.com'" in " ".join(whole)  # the punycode host flagged
    assert any("system" in line for line in seen)  # then the option's description
