"""The screen of a ``BatchState`` as styled lines, sized to the terminal.

Only the option rows that fit are built, so a 1,000-option list costs what a 3-option one
does. All caller text is model-written: it is sanitised here before it is drawn, while the
state keeps (and returns) the labels unchanged.
"""

from __future__ import annotations

from dsh_cli.interaction import display_label, is_recommended, sanitize, sanitize_line
from dsh_cli.providers.terminal.state import BatchState
from dsh_cli.providers.terminal.text import CURSOR, Fragment, Line, cell_width, fit, wrap

__all__ = ["render", "summary"]

_MIN_WIDTH = 20


def _block(style: str, text: str, width: int, indent: int = 1) -> list[Line]:
    """A multi-line text (question, detail) wrapped paragraph by paragraph."""
    lines: list[Line] = []
    for paragraph in sanitize(text).split("\n"):
        lines.extend(wrap([("", " " * indent), (style, paragraph)], width, indent=indent))
    return lines


def _keys(state: BatchState) -> str:
    several = len(state.questions) > 1
    if state.screen == "review":
        return "enter submit · 1-9 change an answer · ← last question · esc cancel"
    if state.option_count == 0:
        moves = " · ↑↓ questions" if several else ""
        return f"type an answer · enter confirm{moves} · ctrl-s skip · esc cancel"
    if state.in_text:
        return "type an answer · enter confirm · ↑ esc options · ctrl-s skip · ctrl-c cancel"
    pick = "1-9 toggle · space toggle" if state.question.is_multi else "1-9 pick"
    moves = " · ←→ questions" if several else ""
    return f"↑↓ move · {pick} · enter confirm · tab other · s skip{moves} · esc cancel"


def _title(state: BatchState) -> str:
    question = state.question
    parts = []
    if len(state.questions) > 1:
        parts.append(f"Question {state.index + 1}/{len(state.questions)}")
    if question.header:
        parts.append(sanitize_line(question.header))
    if question.is_multi:
        parts.append("several allowed")
    return " · ".join(parts)


def _option_row(state: BatchState, index: int, width: int) -> list[Line]:
    question, draft = state.question, state.draft
    count = state.option_count
    number = f"{index + 1}.".rjust(len(str(count + 1)) + 1)
    marker = "›" if draft.highlight == index else " "
    current = "class:current" if draft.highlight == index else ""
    if index == count:
        return _other_row(state, marker, number, current, width)
    option = question.options[index]  # type: ignore[index]
    box = ""
    if question.is_multi:
        box = "[x] " if index in draft.checked else "[ ] "
    prefix = f" {marker} {number} {box}"
    label = sanitize_line(display_label(option.label))
    fragments: list[Fragment] = [(current, prefix), (current + " class:label", label)]
    if is_recommended(option.label):
        fragments += [("", "  "), ("class:badge", "Recommended")]
    answer = draft.answer
    if answer is not None and not question.is_multi and answer.selected == [option.label]:
        fragments += [("", "  "), ("class:chosen", "✓ chosen")]
    if option.description:
        fragments += [("", "  "), ("class:description", sanitize_line(option.description))]
    return wrap(fragments, width, indent=cell_width(prefix))


def _other_row(state: BatchState, marker: str, number: str, current: str,
               width: int) -> list[Line]:
    draft = state.draft
    prefix = f" {marker} {number} "
    fragments: list[Fragment] = [(current, prefix), (current, "Other: ")]
    if state.in_text:
        text = sanitize_line(draft.text)  # the human's own text, but pastes may carry escapes
        cursor = len(sanitize_line(draft.text[: draft.cursor]))
        fragments += [("class:field", text[:cursor]), CURSOR, ("class:field", text[cursor:])]
    elif draft.text:
        fragments.append(("class:field", sanitize_line(draft.text)))
    if draft.text.strip() and draft.checked and state.question.is_multi:
        fragments += [("", "  "), ("class:description", "(replaces the checked options)")]
    return wrap(fragments, width, indent=cell_width(prefix))


def _text_field(state: BatchState, width: int) -> list[Line]:
    draft = state.draft
    text = sanitize_line(draft.text)
    cursor = len(sanitize_line(draft.text[: draft.cursor]))
    return wrap([("", " › "), ("class:field", text[:cursor]), CURSOR,
                 ("class:field", text[cursor:])], width, indent=3)


def _window(lines: list[Line], offset: int, room: int) -> tuple[list[Line], int]:
    """At most ``room`` lines of a tall text block, with a line saying what is hidden."""
    if len(lines) <= room:
        return lines, 0
    shown = max(1, room - 1)
    offset = min(max(0, offset), len(lines) - shown)
    end = offset + shown
    note = f" … lines {offset + 1}-{end} of {len(lines)} · pgup/pgdn to scroll"
    return [*lines[offset:end], [("class:more", note)]], offset


# An inline picker should not take over the terminal (gum and fzf keep to ~10 rows too),
# and the fewer lines a key redraws, the faster it answers.
MAX_LIST_ROWS = 14


def _option_list(state: BatchState, width: int, room: int) -> list[Line]:
    """The option rows that fit in ``room`` lines, scrolled to keep the highlight in view."""
    draft = state.draft
    total = state.option_count + 1
    cache = draft.rows  # a key changes one or two rows, not the twenty on screen
    if len(cache) > 4096:
        cache.clear()
    chosen = tuple(draft.answer.selected) if draft.answer else None

    def rows(index: int) -> list[Line]:
        if index == state.option_count:  # the Other row shows live text: never kept
            return _option_row(state, index, width)
        key = (index, width, draft.highlight == index, index in draft.checked, chosen)
        if key not in cache:
            cache[key] = _option_row(state, index, width)
        return cache[key]

    if total <= room and sum(len(rows(i)) for i in range(total)) <= room:
        draft.top = 0
        return [line for i in range(total) for line in rows(i)]
    inner = max(1, room - 2)  # one line each for the "more above / below" markers
    highlight = draft.highlight
    top = min(max(0, draft.top), total - 1)
    top = min(top, highlight)
    top = max(top, highlight - inner + 1)
    while top < highlight and sum(len(rows(i)) for i in range(top, highlight + 1)) > inner:
        top += 1
    draft.top = top
    body: list[Line] = []
    end = top
    while end < total and len(body) + len(rows(end)) <= inner:
        body.extend(rows(end))
        end += 1
    if end == top:  # one row taller than the screen: show its start, say so below
        body = rows(top)[: inner]
        end = top + 1
    above = f"   ↑ {top} more" if top else ""
    below = f"   ↓ {total - end} more" if end < total else ""
    return [[("class:more", above)], *body, [("class:more", below)]]


def _review(state: BatchState, width: int, height: int) -> list[Line]:
    lines: list[Line] = [[("class:title", f" Review · {len(state.questions)} questions")]]
    rows: list[Line] = []
    for index, question in enumerate(state.questions):
        name = sanitize_line(question.header or question.question)
        prefix = f" {str(index + 1).rjust(len(str(len(state.questions))))}. "
        fragments: list[Fragment] = [("", prefix), ("class:label", fit(name, 40)), ("", ": ")]
        status = state.status(index)
        if status == "answered":
            fragments.append(("class:answer", _answer_text(state, index)))
        else:
            fragments.append(("class:" + status, status))
        rows.extend(wrap(fragments, width, indent=cell_width(prefix)))
    room = max(1, height - 4)
    if len(rows) > room:
        top = min(state.review_top, len(rows) - room)
        state.review_top = top
        note = f"   ↑↓ scroll · lines {top + 1}-{top + room - 1} of {len(rows)}"
        rows = [*rows[top : top + room - 1], [("class:more", note)]]
    return lines + rows


def _answer_text(state: BatchState, index: int) -> str:
    answer = state.drafts[index].answer
    if answer is None:
        return "unanswered"
    if answer.custom is not None:
        return f'"{sanitize_line(answer.custom)}"'
    if not answer.selected:
        return "skipped"
    return ", ".join(sanitize_line(display_label(label)) for label in answer.selected)


def render(state: BatchState, width: int, height: int, *, countdown: str | None = None
           ) -> list[Line]:
    """The lines to draw for ``state`` on a ``width`` × ``height`` terminal."""
    width = max(width - 1, _MIN_WIDTH)  # the last column stays free: no auto-wrap surprises
    height = max(height, 6)
    tail: list[Line] = []
    if state.hint:
        tail.extend(wrap([("class:hint", " ! " + state.hint)], width, indent=3))
    if countdown:
        tail.append([("class:countdown", f" {countdown}")])
    tail.extend(wrap([("class:keys", " " + _keys(state))], width, indent=1))
    if state.screen == "review":
        return _review(state, width, height - len(tail)) + tail

    question = state.question
    head: list[Line] = []
    title = _title(state)
    if title:
        head.extend(wrap([("class:title", " " + title)], width, indent=1))
    text = _block("class:question", question.question, width)
    if question.detail:
        text += _block("class:detail", question.detail, width, indent=3)
    free = height - len(head) - len(tail)
    list_rows = 1 if state.option_count == 0 else min(state.option_count + 1, 3) + 2
    shown, state.draft.text_offset = _window(text, state.draft.text_offset,
                                             max(2, free - list_rows))
    room = max(1, min(free - len(shown), MAX_LIST_ROWS))
    if state.option_count == 0:
        body = _text_field(state, width)
    else:
        body = _option_list(state, width, room)
    return head + shown + body + tail


def summary(state: BatchState, width: int, ending: str | None = None) -> str:
    """The one line left on screen when the UI closes."""
    width = max(width - 1, _MIN_WIDTH)
    if ending is not None or state.outcome is None:
        return fit(f"✗ questions {ending or 'cancelled'}", width)
    parts = []
    for index, question in enumerate(state.questions):
        name = sanitize_line(question.header or question.question)
        parts.append(f"{fit(name, 30)}: {_answer_text(state, index)}")
    return fit("✓ " + " · ".join(parts), width)
