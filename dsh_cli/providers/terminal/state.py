"""The state of one question batch on screen, independent of prompt-toolkit.

Every key of ``spec/terminal.md`` is one method here; the key bindings only dispatch.
A question's ``highlight`` runs over its options and, last, the Other row: the Other
field has focus exactly when the highlight is on that row (optionless questions are
always in their text field). Drafts (checks, Other text, highlight) live per question,
so moving between questions keeps them; an answer is recorded only when the human
confirms or skips. The batch ends with one ``Outcome`` (``ending``): answered (then
``answer`` holds it), cancelled, declined, discussed, or aborted (a desk handing it back).

A filter (``/``) narrows the list while it has focus. What is cut on screen is the
renderer's (``viewport.Viewport``: scroll offsets, page sizes, what ``pgup``/``pgdn`` scroll):
the keys that scroll take it as ``view``, and nothing the renderer computes is kept here.
A first ``esc`` with work in the batch only arms ``confirming``.

An asker inside dsh (an MCP server's form) may take the Other row away (``other``), the
skip (``required``), answer a skip with a ``default``, check typed text by a ``rule`` and
count a multi-select: every answer passes the seam's ``problem_with`` before it is recorded,
and a refusal stays on the question with the reason as the hint. ``declinable`` adds the
decline key (``Outcome.DECLINED``); ``review`` ends even one question on the review screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    problem_with,
)
from dsh_cli.interaction.vocabulary import ANSWER_FIRST, ends_on_review

if TYPE_CHECKING:
    from dsh_cli.providers.terminal.viewport import Viewport

__all__ = ["ANSWER_FIRST", "AT_LEAST_ONE", "NO_MATCH", "BatchState", "Draft"]

AT_LEAST_ONE = "select at least one option, or type an answer"
EMPTY_TEXT = "type an answer, or press ctrl-s to skip"
NO_MATCH = "no option matches the filter"


@dataclass
class Draft:
    """What the human has done so far on one question."""

    highlight: int = 0
    checked: set[int] = field(default_factory=set)
    text: str = ""
    cursor: int = 0
    answer: AskUserQuestionAnswerItem | None = None
    filter: str | None = None  # the filter line's text while it is open
    moves: int = 0  # highlight moves by a movement key (``QuestionView.follow`` then resets)
    note: str = ""  # the human's note on this question, put on the answer
    noting: str | None = None  # the note as it was when the note field opened (it is open)
    replacing: bool = False  # enter on a multi-select with Other text asked: text or note?

    @property
    def has_work(self) -> bool:
        """An answer or a draft that cancelling would throw away."""
        return self.answer is not None or bool(self.checked) or bool(self.text.strip())


class BatchState:
    """One batch, one question at a time, then (for two or more) the review screen."""

    def __init__(self, questions: list[AskUserQuestionItem], *, heading: str | None = None,
                 declinable: bool = False, review: bool = False,
                 headings: list[str | None] | None = None, discussable: bool = False) -> None:
        self.questions = questions
        self.heading = heading  # who asks ("git asks: …"), drawn above every screen
        self.headings = headings  # per question, when its form has its own message
        self.declinable = declinable
        self.reviewed = ends_on_review(questions, review)  # ends on the review screen
        self.discussable = discussable  # a conversation goes on after the batch (dsh chat)
        self.drafts = [Draft() for _ in questions]
        self.index = 0
        self.screen = "question"  # or "review"
        self.reviewing = False  # once the review was reached, advancing returns to it
        self.hint: str | None = None
        self.ending: Outcome | None = None  # how the batch ended, once it has
        self.answer: AskUserQuestionAnswer | None = None  # when it ended answered
        self.confirming = False  # a first esc asked "esc again to discard N answers"
        self._haystacks: dict[int, list[str]] = {}  # per question: lowercased label + text
        self.last: list[set[str]] = [set() for _ in questions]  # labels chosen last time

    def recall(self, last_answers: dict[str, list[str]]) -> None:
        """Highlight (never check or submit) what the same question was answered last time."""
        for index, question in enumerate(self.questions):
            chosen = last_answers.get(question.id) or []
            labels = [option.label for option in question.options or []]
            self.last[index] = {label for label in chosen if label in labels}
            if self.last[index]:
                self.drafts[index].highlight = min(labels.index(label)
                                                   for label in self.last[index])

    # -- what is on screen -------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.ending is not None

    @property
    def question(self) -> AskUserQuestionItem:
        return self.questions[self.index]

    @property
    def draft(self) -> Draft:
        return self.drafts[self.index]

    @property
    def option_count(self) -> int:
        return len(self.question.options or [])

    @property
    def has_other(self) -> bool:
        """Whether the question has an Other row (last, at index ``option_count``)."""
        return self.option_count > 0 and self.question.takes_text

    @property
    def last_row(self) -> int:
        """The index of the last row of the list: the Other row, else the last option."""
        return self.option_count if self.has_other else self.option_count - 1

    @property
    def can_skip(self) -> bool:
        return self.question.can_skip

    @property
    def in_text(self) -> bool:
        """Whether typed characters are text (the Other field or an optionless question)."""
        if self.screen != "question":
            return False
        return self.option_count == 0 or (self.has_other
                                          and self.draft.highlight == self.option_count)

    @property
    def noting(self) -> bool:
        """Whether the note field is open (it then has the keyboard)."""
        return self.screen == "question" and self.draft.noting is not None

    @property
    def preview(self) -> str | None:
        """The highlighted option's preview, if it has one."""
        options = self.question.options or []
        highlight = self.draft.highlight
        return options[highlight].preview if highlight < len(options) else None

    @property
    def filtering(self) -> bool:
        """Whether the filter line is open (it then has the keyboard)."""
        return self.screen == "question" and self.draft.filter is not None

    @property
    def work(self) -> int:
        """How many questions hold an answer or a draft."""
        return sum(draft.has_work for draft in self.drafts)

    def matches(self) -> list[int]:
        """The option indexes the filter keeps (all of them when it is closed or empty)."""
        needle = (self.draft.filter or "").casefold()
        if not needle:
            return list(range(self.option_count))
        haystacks = self._haystacks.get(self.index)
        if haystacks is None:
            haystacks = self._haystacks[self.index] = [
                f"{option.label}\n{option.description or ''}".casefold()
                for option in self.question.options or []]
        return [index for index, text in enumerate(haystacks) if needle in text]

    def status(self, index: int) -> str:
        """``answered``, ``skipped`` or ``unanswered``."""
        answer = self.drafts[index].answer
        if answer is None:
            return "unanswered"
        return "skipped" if answer.skipped else "answered"

    # -- keys ----------------------------------------------------------------------------

    def up(self, view: Viewport | None = None) -> None:
        """``↑``; on the review it scrolls ``view`` (none given: there is no screen to scroll)."""
        self.hint = None
        if self.noting:
            return
        if self.filtering:
            self._move_match(-1)
        elif self.screen == "review":
            if view is not None:
                view.review_top = max(0, view.review_top - 1)
        elif self.option_count == 0:
            self.prev()
        else:
            self._move(-1)

    def down(self, view: Viewport | None = None) -> None:
        """``↓``; on the review it scrolls ``view``, as ``up`` does."""
        self.hint = None
        if self.noting:
            return
        if self.filtering:
            self._move_match(+1)
        elif self.screen == "review":
            if view is not None:
                view.review_top = min(len(self.questions) - 1, view.review_top + 1)
        elif self.option_count == 0:
            self.next()
        else:
            self._move(+1)

    def left(self) -> None:
        if self.filtering or self.noting:
            return
        if self.in_text:
            self.draft.cursor = max(0, self.draft.cursor - 1)
        elif self.screen == "review":
            self.hint = None
            self._show(len(self.questions) - 1)
        else:
            self.prev()

    def right(self) -> None:
        if self.filtering or self.noting:
            return
        if self.in_text:
            self.draft.cursor = min(len(self.draft.text), self.draft.cursor + 1)
        elif self.screen == "question":
            self.next()

    def digit(self, number: int) -> None:
        if self.in_text or self.filtering or self.noting:
            self.insert(str(number))
            return
        self.hint = None
        if self.screen == "review":
            if 1 <= number <= len(self.questions):
                self._show(number - 1)
            else:
                self.hint = f"no question {number}: press 1-{len(self.questions)}"
            return
        count = self.option_count
        if number == count + 1 and self.has_other:
            self.draft.highlight = count
        elif 1 <= number <= count:
            self.draft.highlight = number - 1
            if self.question.is_multi:
                self._toggle(number - 1)
            else:
                self._choose(number - 1)
        else:
            self.hint = f"no option {number}: press 1-{min(count, 9)}" + (
                f", or {count + 1} for Other" if count + 1 <= 9 and self.has_other else ""
            )

    def space(self) -> None:
        if self.in_text or self.filtering or self.noting:
            self.insert(" ")
        elif self.screen == "question":
            self.hint = None
            if self.question.is_multi:
                self._toggle(self.draft.highlight)
            else:
                self._choose(self.draft.highlight)

    def enter(self) -> None:
        self.hint = None
        if self.screen == "review":
            self._submit()
        elif self.noting:
            self.close_note()
        elif self.filtering:
            self._filter_enter()
        elif self.in_text:
            text = self.draft.text.strip()
            if text and self._warn_replacing():
                return
            if text:
                self._record(AskUserQuestionAnswerItem(id=self.question.id, custom=text))
            elif self.question.is_multi and self.draft.checked:
                self._confirm_checked()  # an empty field adds nothing to the ticked options
            else:
                self.hint = EMPTY_TEXT
        elif self.question.is_multi:
            draft = self.draft
            if draft.text.strip():  # Other text overrides the checks, never supplements them
                if self._warn_replacing():
                    return
                self._record(AskUserQuestionAnswerItem(id=self.question.id,
                                                       custom=draft.text.strip()))
            elif draft.checked:
                self._confirm_checked()
            else:
                self.hint = AT_LEAST_ONE
        else:
            self._choose(self.draft.highlight)

    def focus_other(self) -> None:
        """``tab`` or ``o`` on the option list."""
        if self.screen == "question" and not self.in_text and not self.filtering \
                and self.has_other:
            self.hint = None
            self.draft.highlight = self.option_count

    def letter(self, char: str, view: Viewport | None = None) -> None:
        """A printable key: text in a text field, a command letter on the list (``J``/``K``
        scroll the preview in ``view``)."""
        if self.draft.replacing and self.screen == "question":
            self.draft.replacing = False
            if char == "n":
                self._keep_ticks()
                return
        if self.in_text or self.filtering or self.noting:
            self.insert(char)
        elif self.screen == "question" and char == "n":
            self.open_note()
        elif self.screen == "question" and char in "JK" and self.preview is not None:
            if view is not None:
                self.scroll_preview(1 if char == "J" else -1, view)
        elif self.screen == "question" and char == "/" and self.option_count:
            self.hint = None
            self.draft.filter = ""
        elif self.screen == "question" and char == "o":
            self.focus_other()
        elif self.screen == "question" and char == "s":
            self.skip()
        elif char == "d" and self.screen in ("question", "review"):
            self.decline()

    def decline(self) -> None:
        """``d`` on the list and the review screen, ``ctrl-d`` anywhere: decline the batch."""
        if self.declinable:
            self.ending = Outcome.DECLINED

    def discuss(self) -> None:
        """``ctrl-t`` anywhere: leave the batch to talk about it (where a conversation goes on)."""
        if self.discussable:
            self.ending = Outcome.DISCUSSED

    def skip(self) -> None:
        """``s`` on the list, ``ctrl-s`` anywhere on a question."""
        if self.screen != "question":
            return
        self.hint = None
        default = self.question.default_answer()
        if default is not None:
            self._record(default)  # what the seam would fill in: the review shows it
        else:
            self._record(AskUserQuestionAnswerItem(id=self.question.id))

    def escape(self) -> None:
        """``esc``: close the filter, leave the Other field, else cancel the batch.

        With an answer or a draft anywhere in the batch the first ``esc`` only asks
        (``confirming``); the second cancels, any other key goes back (``dismiss``).
        """
        self.hint = None
        if self.confirming:
            self.cancel()
        elif self.noting:
            self.draft.note = self.draft.noting or ""  # the note as it was; the answer stays
            self.draft.noting = None
        elif self.draft.replacing and self.screen == "question":
            self.draft.replacing = False
        elif self.filtering:
            self.draft.filter = None  # the highlight stays where the filter left it
        elif self.in_text and self.option_count > 0:
            self.draft.highlight = self.option_count - 1
        elif self.work:
            self.confirming = True
        else:
            self.cancel()

    def dismiss(self) -> None:
        """Any key but ``esc`` while ``confirming``: back to the batch, nothing lost."""
        self.confirming = False

    def cancel(self) -> None:
        self.ending = Outcome.CANCELLED

    def hand_back(self) -> None:
        """The desk closes with the batch on screen: it stays pending at its server."""
        self.ending = Outcome.ABORTED

    def prev(self) -> None:
        self.hint = None
        if self.screen == "review":
            self._show(len(self.questions) - 1)
        elif self.index > 0:
            self._show(self.index - 1)

    def next(self) -> None:
        self.hint = None
        if self.screen != "question":
            return
        if self.index + 1 < len(self.questions):
            self._show(self.index + 1)
        elif self.reviewed:
            self._review()
        else:
            self.hint = "answer or skip this question"

    def page(self, direction: int, view: Viewport) -> None:
        """``pgup``/``pgdn``: scroll what ``view`` has cut (the renderer clamps), else a page."""
        if self.screen == "review":
            view.review_top = max(0, view.review_top + direction * 5)
            return
        draft, shown = self.draft, view.of(self.index)
        shown.follow(draft.moves)
        self.hint = None
        # a cut question text pages first; its end reached, a cut description pages next
        text = shown.paging == "text" or self.option_count == 0
        if shown.description_cut and (not text or (direction > 0 and not shown.text_more)
                                      or (direction < 0 and shown.description_offset > 0)):
            step = direction * max(1, shown.description_page)
            shown.description_offset = max(0, shown.description_offset + step)
        elif text:
            shown.text_offset = max(0, shown.text_offset + direction * max(1, shown.text_page))
        elif self.filtering:
            self._move_match(direction * max(1, shown.page_rows))
        else:  # a page stops at the last option: landing in Other would turn keys into text
            last = max(draft.highlight, self.option_count - 1)
            step = direction * max(1, shown.page_rows)
            self._highlight(min(last, max(0, draft.highlight + step)))

    def home(self) -> None:
        """``home``: the start of the field, else the first option (or match)."""
        if self.in_text:
            self.draft.cursor = 0
        elif self.filtering:
            found = self.matches()
            if found:
                self._highlight(found[0])
        elif self.screen == "question":
            self._highlight(0)

    def end(self) -> None:
        """``end``: the end of the field, else the last option (or match).

        Not the Other row: there ``home``, ``pgdn`` and ``/`` would type text, so Other is
        reached on purpose (``tab``, ``o``, or moving down onto it).
        """
        if self.in_text:
            self.draft.cursor = len(self.draft.text)
        elif self.filtering:
            found = self.matches()
            if found:
                self._highlight(found[-1])
        elif self.screen == "question":
            self._highlight(max(0, self.option_count - 1))

    def scroll_preview(self, direction: int, view: Viewport) -> None:
        """``J``/``K`` on the list, shift-↓/shift-↑ anywhere: the preview by a page (the
        renderer clamps it and sets the page)."""
        if self.screen != "question" or self.preview is None:
            return
        shown = view.of(self.index)
        shown.preview_for(self.draft.highlight)
        shown.preview_offset = max(0, shown.preview_offset + direction
                                   * max(1, shown.preview_page))

    # -- the note field --------------------------------------------------------------

    def open_note(self) -> None:
        """``n`` on the list: a one-line note for this question, put on its answer."""
        if self.screen == "question" and not self.noting:
            self.hint = None
            self.draft.noting = self.draft.note

    def close_note(self) -> None:
        """``enter`` in the note field: keep the note (on the answer, if there is one)."""
        draft = self.draft
        draft.noting = None
        if draft.answer is not None:
            draft.answer = draft.answer.model_copy(update={"note": draft.note.strip() or None})

    def _warn_replacing(self) -> bool:
        """A multi-select's Other text replaces its ticks: the first enter says so."""
        draft = self.draft
        if not self.question.is_multi or not draft.checked or draft.replacing:
            draft.replacing = False
            return False
        draft.replacing = True
        count = len(draft.checked)
        self.hint = (f"the text replaces the {count} ticked option{'s' if count != 1 else ''}"
                     " · enter: use the text · n: keep the ticks and add it as a note")
        return True

    def _keep_ticks(self) -> None:
        """``n`` after the warning: the ticks are the answer, the Other text its note."""
        draft = self.draft
        text = draft.text.strip()
        draft.note = f"{draft.note.strip()} {text}".strip()
        draft.text, draft.cursor = "", 0
        self.hint = None
        self._confirm_checked()

    # -- the text field --------------------------------------------------------------

    def insert(self, text: str) -> None:
        text = " ".join(text.splitlines())  # the field is one line; pastes lose their breaks
        if self.noting:
            self.hint = None
            self.draft.note += text
            return
        if self.filtering:
            self.hint = None
            self.draft.filter = (self.draft.filter or "") + text
            self._follow_filter()
            return
        if not self.in_text:
            return
        self.hint = None
        draft = self.draft
        draft.text = draft.text[: draft.cursor] + text + draft.text[draft.cursor:]
        draft.cursor += len(text)

    def backspace(self) -> None:
        draft = self.draft
        if self.noting:
            draft.note = draft.note[:-1]
        elif self.filtering:
            draft.filter = (draft.filter or "")[:-1]
            self._follow_filter()
        elif self.in_text and draft.cursor > 0:
            draft.text = draft.text[: draft.cursor - 1] + draft.text[draft.cursor:]
            draft.cursor -= 1

    def delete(self) -> None:
        draft = self.draft
        if self.in_text:
            draft.text = draft.text[: draft.cursor] + draft.text[draft.cursor + 1:]

    def kill_before(self) -> None:
        """``ctrl-u``: delete from the start of the field to the cursor."""
        if self.noting:
            self.draft.note = ""
        elif self.in_text:
            draft = self.draft
            draft.text = draft.text[draft.cursor:]
            draft.cursor = 0

    # -- transitions -----------------------------------------------------------------

    def _move(self, delta: int) -> None:
        rows = self.last_row + 1  # the options and the Other row, if any
        self._highlight((self.draft.highlight + delta) % rows)

    def _highlight(self, index: int) -> None:
        if index != self.draft.highlight:
            self.draft.highlight = index
            self.draft.moves += 1
            self.draft.replacing = False

    def _move_match(self, delta: int) -> None:
        """Among the filter's matches (wrapping by one step, stopping at the ends by a page)."""
        found = self.matches()
        if not found:
            return
        if self.draft.highlight not in found:
            self._highlight(found[0])
            return
        position = found.index(self.draft.highlight) + delta
        if abs(delta) == 1:
            position %= len(found)
        self._highlight(found[min(len(found) - 1, max(0, position))])

    def _follow_filter(self) -> None:
        """Keep the highlight on a match when the filter text changes."""
        found = self.matches()
        if found and self.draft.highlight not in found:
            self._highlight(found[0])

    def _filter_enter(self) -> None:
        """``enter`` in the filter: choose the match, or (multi-select) toggle it and close."""
        found = self.matches()
        if self.draft.highlight not in found:
            self.hint = NO_MATCH
            return
        if self.question.is_multi:
            self._toggle(self.draft.highlight)
            self.draft.filter = None
        else:
            self.draft.filter = None
            self._choose(self.draft.highlight)

    def _confirm_checked(self) -> None:
        labels = self.question.labels
        self._record(AskUserQuestionAnswerItem(
            id=self.question.id, selected=[labels[i] for i in sorted(self.draft.checked)]))

    def _toggle(self, index: int) -> None:
        if index >= self.option_count:
            return
        self.draft.checked ^= {index}

    def _choose(self, index: int) -> None:
        if index >= self.option_count:
            return
        label = self.question.labels[index]
        self._record(AskUserQuestionAnswerItem(id=self.question.id, selected=[label]))

    def _record(self, answer: AskUserQuestionAnswerItem) -> None:
        note = self.draft.note.strip()
        if note:
            answer = answer.model_copy(update={"note": note})
        reason = problem_with(self.question, answer)
        if reason is not None:
            self.hint = reason  # stays on the question: fix it, or do something else
            return
        self.draft.answer = answer
        self.draft.filter = None
        self.draft.noting = None  # ctrl-s in the note field: the note went on the skip
        self._advance()

    def _advance(self) -> None:
        if not self.reviewed:
            self._submit()
        elif self.reviewing or self.index + 1 == len(self.questions):
            self._review()
        else:
            self._show(self.index + 1)

    def _review(self) -> None:
        self.screen = "review"
        self.reviewing = True

    def _show(self, index: int) -> None:
        self.screen = "question"
        self.index = index

    def _submit(self) -> None:
        for index in range(len(self.questions)):
            if self.drafts[index].answer is None:
                self._show(index)
                self.hint = ANSWER_FIRST
                return
        self.answer = AskUserQuestionAnswer(
            answers=[draft.answer for draft in self.drafts if draft.answer is not None])
        self.ending = Outcome.ANSWERED
