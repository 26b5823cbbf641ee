"""The screen of a ``BatchState`` as styled lines, sized to the terminal.

Only the option rows that fit are built, so a 1,000-option list costs what a 3-option one
does. All caller text is model-written: it is sanitised here before it is drawn, while the
state keeps (and returns) the labels unchanged. What is cut on screen (scroll offsets, page
sizes, built rows) goes into a ``Viewport``; the state is only read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import display_label, is_recommended, sanitize, sanitize_line
from dsh_cli.providers.terminal.state import BatchState
from dsh_cli.providers.terminal.text import (
    CURSOR,
    RUN,
    Fragment,
    Line,
    cell_width,
    fit,
    wrap,
)
from dsh_cli.providers.terminal.viewport import QuestionView, Viewport

if TYPE_CHECKING:
    from dsh_cli.interaction import AskUserQuestionAnswerItem, AskUserQuestionItem

__all__ = ["HANDED_BACK", "key_line", "render", "summary"]

# the summary's ending when the desk closes on a batch: neither answered nor aborted
HANDED_BACK = "left pending for the next `dsh attach`"
# at the desk, esc goes back to its inbox: the batch stays pending there, for any desk
BACK_TO_INBOX = "left in the inbox"

_MIN_WIDTH = 20
_MIN_HEIGHT = 6


class _Frame(NamedTuple):
    """A question being drawn: the state read, its window written."""

    state: BatchState
    view: QuestionView


def _block(style: str, text: str, width: int, indent: int = 1) -> list[Line]:
    """A multi-line text (question, detail) wrapped paragraph by paragraph."""
    lines: list[Line] = []
    for paragraph in sanitize(text).split("\n"):
        lines.extend(wrap([("", " " * indent), (style, paragraph)], width, indent=indent))
    return lines


# The key help as items in display order: (forms from long to short, need). The line
# never wraps: optional items take their shorter forms, least needed first, then are
# dropped in the same order; only then do the items of need 0 (enter, esc) shorten, and
# last of all the items of need 1 (the key without which the screen cannot be answered).
_Hint = tuple[tuple[str, ...], int]


def _hints(state: BatchState, closes_desk: bool = False) -> tuple[_Hint, ...]:
    hints = _base_hints(state)
    if closes_desk and hints[-1][0][0] == "esc cancel":
        hints = (*hints[:-1], (("esc inbox", "esc back"), 0))
    if closes_desk and not state.declinable and not state.confirming:
        close: _Hint = (("ctrl-d close desk", "ctrl-d close"), 7)
        return (*hints[:-1], close, hints[-1])
    if state.discussable and not state.confirming:
        # before esc, like decline: leaving to talk is the other way out of the batch
        hints = (*hints[:-1], (("ctrl-t discuss",), 6), hints[-1])
    if not state.declinable or state.confirming:
        return hints
    # the decline key sits before esc; "d" on the list and the review, ctrl-d in a field
    key = "ctrl-d" if state.in_text or state.filtering else "d"
    # on the review, the last step of a form, it is the one place a narrow line must teach it
    decline: _Hint = ((f"{key} decline",), 1 if state.screen == "review" else 5)
    return (*hints[:-1], decline, hints[-1])


def _base_hints(state: BatchState) -> tuple[_Hint, ...]:
    several = state.reviewed
    skip = state.can_skip
    if state.confirming:
        count = state.work
        answers = f"{count} answer{'s' if count != 1 else ''}"
        return ((f"esc again to discard {answers}", f"esc again: discard {answers}",
                 f"esc: discard {count}"), 0), (("any other key to go back",
                                                 "other key: back"), 1)
    if state.noting:
        return ((("type a note",), 5), (("enter keep the note", "enter keep"), 0),
                (("esc back",), 0))
    if state.draft.replacing:
        return ((("enter use the text", "enter text"), 0),
                (("n keep the ticks, text as a note", "n as a note", "n note"), 1),
                (("esc back",), 0))
    if state.screen == "review":
        return ((("enter submit", "enter ok"), 0), (("1-9 change an answer", "1-9 change"), 2),
                (("← last question",), 3), (("esc cancel", "esc quit"), 0))
    if state.filtering:
        enter = "enter toggle" if state.question.is_multi else "enter pick"
        return ((("type to filter",), 4), (("↑↓ matches",), 3), ((enter, "enter ok"), 0),
                (("esc close filter", "esc close", "esc back"), 0))
    if state.option_count == 0:
        return ((("type an answer",), 5), (("enter confirm", "enter ok"), 0),
                *([(("↑↓ questions",), 4)] if several else []),
                *([(("ctrl-s skip",), 2)] if skip else []), (("esc cancel", "esc quit"), 0))
    preview = state.preview is not None
    if state.in_text:
        return ((("type an answer",), 5), (("enter confirm", "enter ok"), 0),
                (("↑ esc options", "esc options", "esc back"), 0),
                *([(("shift-↓↑ preview",), 6)] if preview else []),
                *([(("ctrl-s skip",), 3)] if skip else []), (("ctrl-c cancel",), 2))
    # toggling and confirming answer the question; filtering only finds an option, so it
    # gives way first (a multi-select cannot be answered without its toggle key)
    if state.question.is_multi:
        pick: _Hint = (("1-9 toggle · space toggle", "1-9 space toggle", "space toggle"), 1)
    else:
        pick = (("1-9 pick",), 5)
    return ((("↑↓ move", "↑↓"), 9), pick, (("enter confirm", "enter ok"), 0),
            *([(("J/K preview", "J/K"), 3)] if preview else []),
            (("/ filter",), 7), *([(("tab other",), 2)] if state.has_other else []),
            *([(("s skip",), 4)] if skip else []),
            *([(("←→ questions",), 6)] if several else []), (("esc cancel", "esc quit"), 0))


_KEY_LINES: dict[tuple[tuple[_Hint, ...], int], str] = {}


def key_line(hints: tuple[_Hint, ...], width: int) -> str:
    """The key help in at most ``width`` cells (a leading space when there is room)."""
    cache_key = (hints, width)
    cached = _KEY_LINES.get(cache_key)
    if cached is not None:
        return cached
    if len(_KEY_LINES) > 512:
        _KEY_LINES.clear()
    forms: list[str | None] = [hint[0][0] for hint in hints]

    def line() -> str:
        return " · ".join(form for form in forms if form is not None)

    def fits() -> bool:
        return cell_width(line()) + 1 <= width

    order = sorted(range(len(hints)), key=lambda i: -hints[i][1])  # least needed first
    optional = [i for i in order if hints[i][1]]
    required = [i for i in order if not hints[i][1]]
    vital = [i for i in optional if hints[i][1] == 1]  # kept over enter's and esc's words
    passes = ([(i, form) for i in optional for form in hints[i][0][1:]],  # shorter forms
              [(i, None) for i in optional if i not in vital],  # then drop the least needed
              [(i, form) for i in required for form in hints[i][0][1:]],  # enter, esc
              [(i, None) for i in vital])
    for steps in passes:
        for index, form in steps:
            if fits():
                break
            forms[index] = form
    text = " " + line() if fits() else fit(line(), width)
    _KEY_LINES[cache_key] = text
    return text


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


# A description takes at most this many lines unless its option is highlighted.
FOLDED_LINES = 3
_BADGE = "  Recommended"
_CHOSEN = "  ✓ chosen"
_LAST = "  last answer"


def _label_column(frame: _Frame) -> int:
    """Cells of the widest label with its badges: where descriptions start (cached)."""
    state, cache = frame.state, frame.view.rows
    widest = cache.get("label_width")
    if widest is None:
        widest = 0
        for option in state.question.options or []:
            size = cell_width(sanitize_line(display_label(option.label)))
            if is_recommended(option.label):
                size += len(_BADGE)
            if option.label in state.last[state.index]:
                size += len(_LAST)
            widest = max(widest, size)
        cache["label_width"] = widest
    if state.draft.answer is not None and not state.question.is_multi:
        return widest + len(_CHOSEN)
    return widest


def _option_row(frame: _Frame, index: int, width: int) -> list[Line]:
    state = frame.state
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
    used = cell_width(label)
    if is_recommended(option.label):
        fragments += [("", "  "), ("class:badge", "Recommended")]
        used += len(_BADGE)
    if option.label in state.last[state.index]:
        fragments += [("", "  "), ("class:badge", "last answer")]
        used += len(_LAST)
    answer = draft.answer
    if answer is not None and not question.is_multi and answer.selected == [option.label]:
        fragments += [("", "  "), ("class:chosen", "✓ chosen")]
        used += len(_CHOSEN)
    indent = cell_width(prefix)
    if not option.description:
        return wrap(fragments, width, indent=indent)
    description = ("class:description", sanitize_line(option.description))
    column = indent + _label_column(frame) + 2
    if column <= width // 2:  # one column after the longest label
        fragments += [("", " " * (column - indent - used)), description]
        lines = wrap(fragments, width, indent=column)
    else:  # no room for a column: the description goes under its label
        lines = wrap(fragments, width, indent=indent)
        lines += wrap([("", " " * indent), description], width, indent=indent)
    if draft.highlight != index and len(lines) > FOLDED_LINES + (column > width // 2):
        lines = lines[: FOLDED_LINES + (column > width // 2)]
        lines[-1] = _cut(lines[-1], width)
    return lines


def _cut(line: Line, width: int) -> Line:
    """``line`` ending in ``…``: the mark that more text follows (shown on highlight)."""
    out: Line = []
    used = 0
    for style, text in line:
        size = cell_width(text)
        if used + size > width - 1:
            text = fit(text + " ", max(1, width - used)).removesuffix("…")
            out.append((style, text))
            break
        out.append((style, text))
        used += size
    out.append(("class:more", "…"))
    return out


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


def _window(lines: list[Line], offset: int, room: int, width: int
            ) -> tuple[list[Line], int, int]:
    """At most ``room`` lines of a tall text block, with a line saying what is hidden.

    Returns the lines, the clamped offset and how many of the text's lines are shown (what
    a page moves, so paging never jumps over a line the human has not seen).
    """
    if len(lines) <= room:
        return lines, 0, len(lines)
    shown = max(1, room - 1)
    offset = min(max(0, offset), len(lines) - shown)
    end = offset + shown
    if room <= 1:  # no line to spare for the note: the cut is marked on the line itself
        line = lines[offset]
        return [_cut(line, width) if end < len(lines) else _after_cut(line, width)], offset, 1
    span = f"{offset + 1}-{end}"
    notes = (f" … lines {span} of {len(lines)} · pgup/pgdn to scroll",
             f" … lines {span} of {len(lines)} · pgup/pgdn", f" … {span}/{len(lines)} pgup/pgdn")
    note = next((note for note in notes if cell_width(note) <= width), notes[-1])
    return [*lines[offset:end], [("class:more", fit(note, width))]], offset, shown


def _after_cut(line: Line, width: int) -> Line:
    """The last line of a text shown alone: ``…`` first, the mark that text came before."""
    text = "".join(text for _, text in line).lstrip()
    return [("class:more", "…"), ("", fit(text, width - 1))]


# An inline picker should not take over the terminal (gum and fzf keep to ~10 rows too),
# and the fewer lines a key redraws, the faster it answers.
MAX_LIST_ROWS = 14
PREVIEW_ROWS = MAX_LIST_ROWS  # a preview's lines, its marker included: J/K scroll the rest


def _option_list(frame: _Frame, width: int, room: int) -> list[Line]:
    """The option rows that fit in ``room`` lines, scrolled to keep the highlight in view.

    With the filter open only the matches (and the Other row) are listed, by their numbers.
    """
    state, view = frame
    draft = state.draft
    count = state.option_count
    order: range | list[int] = range(state.last_row + 1)
    if state.filtering:
        order = [*state.matches(), *([count] if state.has_other else [])]
    total = len(order)
    cache = view.rows  # a key changes one or two rows, not the twenty on screen
    if len(cache) > 4096:
        cache.clear()
    chosen = tuple(draft.answer.selected) if draft.answer else None

    def rows(position: int) -> list[Line]:
        index = order[position]
        if index == count:  # the Other row shows live text: never kept
            return _option_row(frame, index, width)
        key = (index, width, draft.highlight == index, index in draft.checked, chosen)
        if key not in cache:
            cache[key] = _option_row(frame, index, width)
        row: list[Line] = cache[key]  # the cache keeps rows by what shows, and one width
        return row

    highlight = order.index(draft.highlight) if draft.highlight in order else 0
    view.page_rows = max(1, room - 2)
    if total <= room and sum(len(rows(i)) for i in range(total)) <= room:
        view.top = 0
        return [line for i in range(total) for line in rows(i)]
    tall = rows(highlight)
    if room < 3:
        if room == 2 and total > 1:  # a line at a time, each marked "…": a cell kept free
            tall = _option_row(frame, order[highlight], width - 1)
        return _compact_list(view, tall, highlight, total, room, width)
    inner = room - 2  # one line each for the "more above / below" markers
    if len(tall) > inner:  # the highlighted row alone is taller than the room: page it
        top = view.top = highlight
        end = top + 1
        space = room - (1 if top else 0) - (1 if end < total else 0)
        if space == 1:  # a line at a time, each marked "…": one cell kept free for it
            tall = _option_row(frame, order[highlight], width - 1)
        body, view.description_offset, view.description_page = _window(
            tall, view.description_offset, space, width)
        if len(tall) > space:
            _description_cut(view)
    else:
        top = min(max(0, view.top), total - 1)
        top = min(top, highlight)
        top = max(top, highlight - inner + 1)
        while sum(len(rows(i)) for i in range(top, highlight + 1)) > inner:
            top += 1
        view.top = top
        capacity = room - (1 if top else 0)  # no marker row above the first option
        body, heights = [], []
        end = top
        while end < total and len(body) + len(rows(end)) <= capacity:
            body.extend(rows(end))
            heights.append(len(rows(end)))
            end += 1
        while end < total and len(body) > capacity - 1 and end - 1 > highlight:
            del body[len(body) - heights.pop():]  # room for the "more below" marker
            end -= 1
    above = [[("class:more", f"   ↑ {top} more")]] if top else []
    below = [[("class:more", f"   ↓ {total - end} more")]] if end < total else []
    return [*above, *body, *below]


def _description_cut(view: QuestionView) -> None:
    """The highlighted description is cut: pgup/pgdn page it (after a cut question text)."""
    view.description_cut = True
    if view.paging == "list":
        view.paging = "description"


def _compact_list(view: QuestionView, tall: list[Line], highlight: int, total: int,
                  room: int, width: int) -> list[Line]:
    """One or two rows of room: the highlighted row, then one line counting the rest."""
    view.top = highlight
    space = room - 1 if total > 1 else room
    if space < 1:  # a single line: the highlight, its cut marked on itself
        return [_cut(tall[0], width)]
    body, view.description_offset, view.description_page = _window(
        tall, view.description_offset, space, width)
    if len(tall) > space:
        _description_cut(view)
    if total == 1:
        return body
    hidden = [f"↑ {highlight}" if highlight else "",
              f"↓ {total - highlight - 1}" if highlight + 1 < total else ""]
    note = "   " + " ".join(part for part in hidden if part) + " more"
    return [*body, [("class:more", fit(note, width))]]


def _question_name(question: AskUserQuestionItem, width: int) -> str:
    """A question named in one line: its header, else its text cut to ``width`` cells."""
    return fit(sanitize_line(question.header or question.question), width)


def _text(state: BatchState, width: int, heading_cut: bool) -> list[Line]:
    """The question, its detail and the asker's notes; a cut heading's whole text last."""
    question = state.question
    text = _block("class:question", question.question, width)
    if question.detail:
        text += _block("class:detail", question.detail, width, indent=3)
    text += _notes(state, width)
    if heading_cut:  # a message longer than the heading's room is read whole here
        text += wrap([("class:source", "   " + sanitize_line(_asker(state) or ""))], width,
                     indent=3)
    return text


def _asker(state: BatchState) -> str | None:
    """The heading above this screen: the question's own form's, else the batch's."""
    if state.headings is not None and state.screen != "review":
        return state.headings[state.index]
    return state.heading


def _heading(state: BatchState, width: int, room: int = 2) -> tuple[list[Line], bool]:
    """Who asks, above every screen of the batch ("git asks: …"), in at most ``room``
    (two) lines, a cut marked with ``…``; and whether it was cut."""
    asker = _asker(state)
    if not asker:
        return [], False
    if room <= 0:
        return [], True
    text = " ── " + sanitize_line(asker)
    if room == 1:
        return [[("class:source", fit(text, width))]], cell_width(text) > width
    lines = wrap([("class:source", text)], width, indent=4)
    if len(lines) <= 2:
        return lines, False
    return [*lines[:1], _cut(lines[1], width)], True


def _notes(state: BatchState, width: int) -> list[Line]:
    """The asker's fields as lines: the warning, what text must be, the count, the default."""
    question = state.question
    lines: list[Line] = []
    if question.warning:
        lines += wrap([("class:warning", " ! " + sanitize_line(question.warning))], width,
                      indent=3)
    parts = []
    if question.rule is not None and question.takes_text:
        parts.append("expects " + question.rule.describe())
    if question.is_multi and (question.min_items is not None or question.max_items is not None):
        low, high = question.min_items or 0, question.max_items
        parts.append(f"choose {low}-{high}" if high is not None else f"choose at least {low}")
    default = question.default_text()
    if default is not None:
        parts.append(f"default: {default}")
    elif question.required:
        parts.append("required")
    if parts:
        lines += wrap([("class:note", "   " + sanitize_line(" · ".join(parts)))], width,
                      indent=3)
    return lines


def _review(state: BatchState, view: Viewport, width: int, height: int) -> list[Line]:
    count = len(state.questions)
    lines: list[Line] = [[("class:title", fit(
        f" Review · {count} question{'s' if count != 1 else ''}", width))]]
    rows: list[Line] = []
    for index, question in enumerate(state.questions):
        prefix = f" {str(index + 1).rjust(len(str(len(state.questions))))}. "
        name = _question_name(question, max(8, min(40, (width - len(prefix)) // 2)))
        fragments: list[Fragment] = [("", prefix), ("class:label", name), ("", ": ")]
        status = state.status(index)
        if status == "answered":
            fragments.append(("class:answer", _answer_text(state, index)))
        else:
            fragments.append(("class:" + status, status))
        rows.extend(wrap(fragments, width, indent=cell_width(prefix)))
    room = max(1, height - 1)
    if len(rows) > room:
        shown = max(1, room - 1)
        top = view.review_top = min(view.review_top, len(rows) - shown)
        note = f"   ↑↓ scroll · lines {top + 1}-{top + shown} of {len(rows)}"
        rows = [*rows[top : top + shown], [("class:more", fit(note, width))]]
    if 1 + len(rows) > height:
        lines = []  # a tiny terminal: the rows matter more than the title
    return lines + rows[: max(1, height)]


def _answer_text(state: BatchState, index: int) -> str:
    answer = state.drafts[index].answer
    if answer is None:
        return "unanswered"
    if answer.note is not None:
        return f'{_choice_text(answer)} · note: "{sanitize_line(answer.note)}"'
    return _choice_text(answer)


def _choice_text(answer: AskUserQuestionAnswerItem) -> str:
    if answer.custom is not None:
        return f'"{sanitize_line(answer.custom)}"'
    if not answer.selected:
        return "skipped"
    return ", ".join(sanitize_line(display_label(label)) for label in answer.selected)


_NOTE_HINT: _Hint = (("n note",), 10)


def _with_note(state: BatchState, hints: tuple[_Hint, ...], width: int) -> tuple[_Hint, ...]:
    """The note key, before esc, on a list whose key help has room for it at full length:
    it never makes another key shorten or go."""
    if state.screen != "question" or state.in_text or state.filtering or state.noting \
            or state.draft.replacing or state.confirming or not state.option_count:
        return hints
    noted = (*hints[:-1], _NOTE_HINT, hints[-1])
    full = " · ".join(hint[0][0] for hint in noted)
    return noted if cell_width(full) + 1 <= width else hints


def _tail(state: BatchState, width: int, height: int, countdown: str | None,
          closes_desk: bool = False) -> list[Line]:
    """The hint, the countdown and the key help: they keep their rows when others give up."""
    keys = key_line(_with_note(state, _hints(state, closes_desk), width), width)
    tail: list[Line] = [[("class:confirm" if state.confirming else "class:keys", keys)]]
    if countdown:
        tail.insert(0, [("class:countdown", fit(f" {countdown}", width))])
    if state.hint:
        hint = wrap([("class:hint", " ! " + state.hint)], width, indent=3)
        if len(hint) + len(tail) > height // 2:
            hint = [[("class:hint", fit(" ! " + state.hint, width))]]
        tail[:0] = hint
    return tail


def _note_line(state: BatchState, width: int) -> list[Line]:
    """The note field while it is open, else the note given (none: no line)."""
    draft = state.draft
    if not state.noting and not draft.note.strip():
        return []
    text = sanitize_line(draft.note)
    room = width - 8
    if cell_width(text) > room:  # keep the end of what is typed, where the cursor is
        text = "…" + text[-max(1, room - 1):]
    if state.noting:
        return [[("", " note › "), ("class:field", text), CURSOR]]
    return [[("class:note", fit(" note: " + text, width))]]


def _with_preview(frame: _Frame, width: int, room: int, avail: int) -> list[Line]:
    """The option list with the highlighted option's preview beside it (from 100 columns)
    or below it, in ``avail`` lines; the preview gives way first, the list never does."""
    from dsh_cli.providers.terminal.preview import SIDE_BY_SIDE, preview_lines, preview_window

    state, view = frame
    text = state.preview or ""
    view.preview_for(state.draft.highlight)
    if width + 1 >= SIDE_BY_SIDE:
        left = min(width // 2, max(36, width * 2 // 5))
        body = _option_list(frame, left, room)
        inner = width - left - 3
        lines = _preview_cache(frame, text, preview_lines)
        shown, view.preview_offset, page = preview_window(lines, view.preview_offset,
                                                          max(len(body), min(avail, PREVIEW_ROWS)),
                                                          inner)
        view.preview_page = page
        out: list[Line] = []
        for number in range(max(len(body), len(shown))):
            row = body[number] if number < len(body) else []
            pad = left - sum(cell_width(part) for _, part in row)
            side = shown[number] if number < len(shown) else []
            # the blank and the bar as one cell, the preview line as another: a frame writes
            # each at once and compares it once (``runs.RunWindow``)
            out.append([*row, *_as_runs([("class:more", " " * pad + " │ "), *side])])
        return out
    body = _option_list(frame, width, room)
    space = min(avail - len(body) - 1, PREVIEW_ROWS)  # a rule line above the preview
    if space < 2:  # no room for a line and its marker: the preview gives way
        return body
    lines = _preview_cache(frame, text, preview_lines)
    shown, view.preview_offset, page = preview_window(lines, view.preview_offset, space,
                                                      width - 3)
    view.preview_page = page
    rule: Line = [("class:more", fit(" ┌ preview", width))]
    return [*body, rule, *(_as_runs([("class:more", " │ "), *line]) for line in shown)]


def _as_runs(line: Line) -> Line:
    """Each fragment drawn as one cell (``RUN``), as the last ones of a line must be."""
    return [(f"{RUN} {style}", text) for style, text in line]


def _preview_cache(frame: _Frame, text: str, build: Any) -> list[str]:
    """The highlighted preview's lines, built once (keys redraw it often)."""
    key = ("preview", frame.state.draft.highlight)
    cache = frame.view.rows
    if key not in cache:
        cache[key] = build(text)
    lines: list[str] = cache[key]
    return lines


def _filter_line(state: BatchState, width: int) -> Line:
    typed = sanitize_line(state.draft.filter or "")
    found = len(state.matches())
    count = f"  {found}/{state.option_count}"
    room = width - 3 - len(count) - 1
    if cell_width(typed) > room:  # keep the end of what is typed, where the cursor is
        typed = "…" + typed[-max(1, room - 1):]
    return [("", " / "), ("class:field", typed), CURSOR, ("class:more", count)]


def render(state: BatchState, width: int, height: int, *, countdown: str | None = None,
           closes_desk: bool = False, view: Viewport | None = None) -> list[Line]:
    """The lines to draw for ``state`` on a ``width`` × ``height`` terminal (``closes_desk``:
    the key help teaches the desk's ``ctrl-d``), scrolled as ``view`` is (and clamped into
    it); without a ``view``, a first frame.

    Every line fits in ``width - 1`` cells and there are at most ``height`` lines (from
    20 × 6 up): the key help never wraps, and the title, the question and then the list
    give up rows before the hints do.
    """
    width = max(width, _MIN_WIDTH) - 1  # the last column stays free: no auto-wrap surprises
    height = max(height, _MIN_HEIGHT)
    view = Viewport() if view is None else view
    tail = _tail(state, width, height, countdown, closes_desk)
    free = height - len(tail)
    if state.screen == "review":
        # the title and two rows (or a row and the scroll note) come before who asks
        heading, _ = _heading(state, width, free - min(len(state.questions) + 1, 3))
        return heading + _review(state, view, width, free - len(heading)) + tail

    draft, window = state.draft, view.of(state.index)
    frame = _Frame(state, window)
    window.follow(draft.moves)
    window.paging, window.description_cut = "list", False
    title = _title(state)
    filter_line = [_filter_line(state, width)] if state.filtering else []
    filter_line += _note_line(state, width)  # what sits under the text like the filter
    if state.option_count == 0:
        body_min = len(_text_field(state, width))
    else:
        rows = len(state.matches()) + state.has_other if state.filtering else state.last_row + 1
        body_min = min(rows, 3 if free >= 6 else 2)  # the highlight and a "more" line
        if rows > 1 and free >= 6 and (not state.filtering or draft.highlight in state.matches()):
            tall = len(_option_row(frame, draft.highlight, width))  # a wrapped highlight
            body_min = min(3, max(body_min, tall + 1))
    # What the smallest terminals give up, last first: the heading's second line, the
    # title, the heading; the question keeps one line and the list its minimum.
    spare = free - body_min - len(filter_line) - 1
    heading, cut = _heading(state, width, min(1, spare) + max(0, spare - 1 - bool(title)))
    spare -= len(heading)
    head: list[Line] = ([[("class:title", fit(" " + title, width))]] if title and spare > 0
                        else [])
    text_room = max(1, free - len(heading) - len(head) - len(filter_line) - body_min)
    # a text shown a line at a time marks each line with "…": one cell kept free for it
    text = _text(state, width - (text_room == 1), cut)
    shown, window.text_offset, window.text_page = _window(text, window.text_offset, text_room,
                                                          width)
    if len(shown) < len(text):
        window.paging = "text"
        window.text_more = window.text_offset + window.text_page < len(text)
    room = max(1, min(free - len(heading) - len(head) - len(shown) - len(filter_line),
                      MAX_LIST_ROWS))
    if state.option_count == 0:
        body = _text_field(state, width)[-room:]
    elif state.preview is not None:
        avail = free - len(heading) - len(head) - len(shown) - len(filter_line)
        body = _with_preview(frame, width, room, avail)
    else:
        body = _option_list(frame, width, room)
    return heading + head + shown + filter_line + body + tail


def summary(state: BatchState, width: int, ending: str | None = None) -> str:
    """What is left on screen when the UI closes: one line, or the questions left to discuss."""
    width = max(width, _MIN_WIDTH) - 1
    if ending is None and state.ending is Outcome.DISCUSSED:
        # the questions stay on screen above the chat prompt the human talks in
        asked = [fit(f"  · {sanitize_line(q.question)}", width) for q in state.questions]
        return "\n".join([fit("… questions left to discuss:", width), *asked])
    if ending is not None or state.ending is not Outcome.ANSWERED:
        ending = ending or (state.ending or Outcome.CANCELLED).word
        # ↩ still open; ✓ answered at another desk (withdrawn from this one), ✗ else
        mark = "↩" if ending in (HANDED_BACK, BACK_TO_INBOX) \
            else "✓" if ending.startswith("answered") else "✗"
        return fit(f"{mark} questions {ending}", width)
    parts = []
    for index, question in enumerate(state.questions):
        name = sanitize_line(question.header or question.question)
        parts.append(f"{fit(name, 30)}: {_answer_text(state, index)}")
    return fit("✓ " + " · ".join(parts), width)
