"""Request and answer validation, done once in the seam.

Request rules (``spec/questions.md``) raise ``INVALID_QUESTIONS`` with the path and the
rule, e.g. ``questions[1].options[2].label: duplicate label "SQLite"``. Emptiness and
uniqueness are judged on what the screen shows (``sanitize_line``, trimmed): ``Yes`` and
``Ye\u200bs`` are one label to a human, and a label of zero-width characters is blank.
Answers that come
from a provider or from outside the process are checked against their request: labels
are put in option order and ``custom`` is trimmed; anything else that does not fit raises
``INVALID_ANSWER``, again naming the path.

The elicitation fields of a question are answer rules too, checked here once for every
UI, the relay and the answers file: no custom text where ``other`` is False, no skip of a
``required`` question, typed text that passes its ``rule``, a multi-select within
``min_items``/``max_items``. A skip of a question with a ``default`` is answered with the
default, so whoever asked gets it whichever UI answered. ``problem_with`` gives the reason
alone, for a UI that checks before it advances and asks again.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from dsh_cli.core.errors import (
    EMPTY_QUESTIONS,
    INVALID_ANSWER,
    INVALID_QUESTIONS,
    UserInteractionError,
)
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.core.shapes import format_validation_error
from dsh_cli.interaction.vocabulary import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
)

__all__ = [
    "LIMITS",
    "check_questions",
    "failing_answer",
    "limits_text",
    "problem_with",
    "validate_answer",
    "validate_answer_item",
]

LIMITS = {
    "questions": 20,
    "options": 50,
    "label": 200,
    "header": 80,
    "question": 4000,
    "detail": 4000,
    "description": 1000,
    "warning": 1000,
    "source": 200,
    "message": 4000,
    "custom": 100_000,  # an answer's free text: one copy is kept per store write
    "preview": 10_000,  # an option's preview: characters, newlines kept
    "preview_lines": 200,
}



def limits_text() -> str:
    """The caps in words, for ``dsh schema --help`` and the man page (one source: LIMITS)."""
    return (f"at most {LIMITS['questions']} questions, {LIMITS['options']} options per "
            f"question; at most {LIMITS['label']} characters per label, {LIMITS['header']} "
            f"per header, {LIMITS['question']} per question or detail, "
            f"{LIMITS['description']} per description, {LIMITS['preview']} characters and "
            f"{LIMITS['preview_lines']} lines per preview")


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_LINE_BREAK = re.compile("[\n\r\u2028\u2029\x0b\x0c\x85]")
_ANSWER_PATH = re.compile(r"answers\[(\d+)\]")  # how validate_answer names an answer
MAX_LABELS_SHOWN = 10  # an unknown label's error lists this many valid ones


def _invalid(path: str, rule: str) -> UserInteractionError:
    return UserInteractionError(f"{path}: {rule}", INVALID_QUESTIONS)


def _check_line(value: str, path: str, what: str) -> None:
    if _LINE_BREAK.search(value):
        raise _invalid(path, f"{what} must be one line")
    if _CONTROL.search(value):
        raise _invalid(path, f"{what} must not contain control characters")


def _check_length(value: str | None, path: str, what: str) -> None:
    limit = LIMITS[what]
    if value is not None and len(value) > limit:
        raise _invalid(path, f"{what} is longer than {limit} characters ({len(value)})")


def check_questions(request: AskUserQuestionRequest) -> None:
    """Raise ``EMPTY_QUESTIONS`` or ``INVALID_QUESTIONS`` for a batch that breaks a rule."""
    questions = request.questions
    if not questions:
        raise UserInteractionError("the batch has no questions", EMPTY_QUESTIONS)
    if len(questions) > LIMITS["questions"]:
        raise _invalid("questions", f"at most {LIMITS['questions']} questions ({len(questions)})")
    seen_ids: dict[str, str] = {}  # shown id -> the path of its first use
    for index, item in enumerate(questions):
        _check_item(item, f"questions[{index}]", seen_ids)
        _check_elicitation(item, f"questions[{index}]")
    if request.source is not None:
        if not request.source.name.strip():
            raise _invalid("source.name", "name must not be empty")
        _check_line(request.source.name, "source.name", "source")
        _check_length(request.source.name, "source.name", "source")
        _check_length(request.source.message, "source.message", "message")


def _check_elicitation(item: AskUserQuestionItem, path: str) -> None:
    """The asker's own fields: a sane range, a one-line warning, a default that fits."""
    if item.warning is not None:
        _check_line(item.warning, f"{path}.warning", "warning")
        _check_length(item.warning, f"{path}.warning", "warning")
    for name in ("min_items", "max_items"):
        value = getattr(item, name)
        if value is not None and value < 0:
            raise _invalid(f"{path}.{name}", f"{name} must not be negative")
    if item.min_items is not None and item.max_items is not None \
            and item.min_items > item.max_items:
        raise _invalid(f"{path}.min_items", "min_items is greater than max_items")
    default = item.default_answer()
    if default is not None:
        if default.skipped:
            raise _invalid(f"{path}.default", "a default needs labels or custom text")
        try:
            _normalise(item, default)
        except _Unfit as unfit:
            raise _invalid(f"{path}.default{unfit.field}", f"the default does not fit: "
                           f"{unfit.reason}") from None


def _shown(text: str) -> str:
    """``text`` as a human sees it on screen: sanitised and trimmed."""
    return sanitize_line(text).strip()


def _check_shown(value: str, path: str, what: str) -> str:
    """What ``value`` shows as; ``INVALID_QUESTIONS`` when that is nothing."""
    if not value.strip():
        raise _invalid(path, f"{what} must not be empty")
    shown = _shown(value)
    if not shown:
        raise _invalid(path, f"{what} shows as blank (only invisible or control characters)")
    return shown


def _duplicate(what: str, value: str, shown: str, first: str) -> str:
    if value.strip() == shown:
        return f'duplicate {what} "{shown}"'
    return f'duplicate {what} "{shown}" as shown (the same as {first})'


def _check_item(item: AskUserQuestionItem, path: str, seen_ids: dict[str, str]) -> None:
    shown_id = _check_shown(item.id, f"{path}.id", "id")
    _check_line(item.id, f"{path}.id", "id")
    if shown_id in seen_ids:
        raise _invalid(f"{path}.id", _duplicate("id", item.id, shown_id, seen_ids[shown_id]))
    seen_ids[shown_id] = f"{path}.id"
    _check_shown(item.question, f"{path}.question", "question")
    _check_length(item.question, f"{path}.question", "question")
    _check_length(item.detail, f"{path}.detail", "detail")
    if item.header is not None:
        _check_line(item.header, f"{path}.header", "header")
        _check_length(item.header, f"{path}.header", "header")
    options = item.options or []
    if len(options) > LIMITS["options"]:
        raise _invalid(f"{path}.options", f"at most {LIMITS['options']} options ({len(options)})")
    seen_labels: dict[str, str] = {}  # shown label -> the options[n] that showed it first
    for number, option in enumerate(options):
        option_path = f"{path}.options[{number}]"
        shown = _check_shown(option.label, f"{option_path}.label", "label")
        _check_line(option.label, f"{option_path}.label", "label")
        _check_length(option.label, f"{option_path}.label", "label")
        if shown in seen_labels:
            raise _invalid(f"{option_path}.label",
                           _duplicate("label", option.label, shown, seen_labels[shown]))
        seen_labels[shown] = f"options[{number}]"
        _check_length(option.description, f"{option_path}.description", "description")
        _check_preview(option.preview, f"{option_path}.preview")


def _check_preview(preview: str | None, path: str) -> None:
    """A preview is many lines (code, a config): capped in characters and in lines."""
    if preview is None:
        return
    _check_length(preview, path, "preview")
    lines = preview.count("\n") + 1
    if lines > LIMITS["preview_lines"]:
        raise _invalid(path, f"preview has more than {LIMITS['preview_lines']} lines ({lines})")


class _Unfit(Exception):
    """Why an answer item does not fit its question; ``field`` is ``.custom``, ``.selected``."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def _bad_answer(path: str, rule: str) -> UserInteractionError:
    return UserInteractionError(f"{path}: {rule}", INVALID_ANSWER)


def failing_answer(message: str | None) -> int | None:
    """The index of the first answer ``validate_answer``'s message names ("answers[1]…")."""
    found = _ANSWER_PATH.match(message or "")
    return int(found.group(1)) if found else None


def validate_answer(request: AskUserQuestionRequest, answer: Any) -> AskUserQuestionAnswer:
    """The answer normalised against ``request``, or ``INVALID_ANSWER`` naming the path."""
    if not isinstance(answer, AskUserQuestionAnswer):
        try:
            answer = AskUserQuestionAnswer.model_validate(answer)
        except ValidationError as error:
            raise UserInteractionError(format_validation_error(error), INVALID_ANSWER) from None
    questions = request.questions
    items = answer.answers
    if len(items) != len(questions):
        raise _bad_answer("answers", f"expected {len(questions)} answers, got {len(items)}")
    normalised, problems = [], []
    for index, (question, item) in enumerate(zip(questions, items, strict=True)):
        path = f"answers[{index}]"
        if item.id != question.id:
            problems.append(f'{path}.id: expected "{question.id}", got "{item.id}"')
            continue
        try:
            normalised.append(validate_answer_item(question, item, path))
        except UserInteractionError as error:  # every bad answer at once, not the first
            problems.append(error.message)
    if problems:
        raise UserInteractionError("; ".join(problems), INVALID_ANSWER)
    return AskUserQuestionAnswer(answers=normalised)


def validate_answer_item(
    question: AskUserQuestionItem, item: AskUserQuestionAnswerItem, path: str = "answer"
) -> AskUserQuestionAnswerItem:
    """One answer checked against its question: labels in option order, custom trimmed.

    A skip of a question with a default comes back as the default.
    """
    try:
        return _normalise(question, item)
    except _Unfit as unfit:
        raise _bad_answer(f"{path}{unfit.field}", unfit.reason) from None


def problem_with(question: AskUserQuestionItem, item: AskUserQuestionAnswerItem) -> str | None:
    """Why ``item`` cannot answer ``question``, in words for the human; None when it can."""
    try:
        _normalise(question, item)
    except _Unfit as unfit:
        return unfit.reason
    return None


def _normalise(question: AskUserQuestionItem, item: AskUserQuestionAnswerItem
               ) -> AskUserQuestionAnswerItem:
    """The answer checked, with its note (trimmed; a blank one dropped) kept on it."""
    answer = _normalise_choice(question, item)
    note = item.note.strip() if item.note is not None else None
    if not note:
        return answer
    if len(note) > LIMITS["custom"]:
        raise _Unfit(".note", f"a note is longer than {LIMITS['custom']} characters "
                     f"({len(note)})")
    return answer.model_copy(update={"note": note})


def _normalise_choice(question: AskUserQuestionItem, item: AskUserQuestionAnswerItem
                      ) -> AskUserQuestionAnswerItem:
    custom = item.custom
    if custom is not None:
        custom = custom.strip()
        if not custom:
            raise _Unfit(".custom", "custom text must not be blank")
        if len(custom) > LIMITS["custom"]:
            raise _Unfit(".custom", f"custom text is longer than {LIMITS['custom']} "
                         f"characters ({len(custom)})")
        if item.selected:
            raise _Unfit(".selected", "labels cannot be given together with custom")
        if not question.takes_text:
            raise _Unfit(".custom", "this question takes one of its options, not custom text")
        if question.rule is not None:
            reason = question.rule.problem(custom)
            if reason is not None:
                raise _Unfit(".custom", f"expected {reason}")
        return AskUserQuestionAnswerItem(id=item.id, selected=[], custom=custom)
    labels = question.labels
    if item.selected and not labels:
        raise _Unfit(".selected", "the question has no options; answer with custom")
    seen: set[str] = set()
    for label in item.selected:
        if label not in labels:
            raise _Unfit(".selected", f'unknown label "{label}"; {_valid_labels(labels, label)}')
        if label in seen:
            raise _Unfit(".selected", f'duplicate label "{label}"')
        seen.add(label)
    if len(seen) > 1 and not question.is_multi:
        raise _Unfit(".selected", "a single-select question takes at most one label")
    if not seen:
        default = question.default_answer()
        if default is not None and not default.skipped:
            return _normalise_choice(question, default.model_copy(update={"id": item.id}))
        if question.required:
            raise _Unfit("", "this question is required: it cannot be skipped")
    elif question.is_multi:
        _check_count(question, len(seen))
    return AskUserQuestionAnswerItem(
        id=item.id, selected=[label for label in labels if label in seen]
    )


def _valid_labels(labels: list[str], given: str) -> str:
    """The labels that would do, the closest first: what to type instead."""
    import difflib

    folded = {label.casefold(): label for label in labels}
    close = ([label for label in labels if given.strip()
              and label.casefold().startswith(given.casefold())]
             or [folded[match] for match in difflib.get_close_matches(
                 given.casefold(), list(folded), n=1, cutoff=0.6)])
    shown = ", ".join(f'"{label}"' for label in labels[:MAX_LABELS_SHOWN])
    more = f" and {len(labels) - MAX_LABELS_SHOWN} more" if len(labels) > MAX_LABELS_SHOWN else ""
    mean = f'did you mean "{close[0]}"? ' if close else ""
    return f"{mean}the labels are {shown}{more}"


def _check_count(question: AskUserQuestionItem, count: int) -> None:
    low, high = question.min_items, question.max_items
    if low is not None and count < low:
        raise _Unfit(".selected", f"choose at least {low} option{'s' if low != 1 else ''}")
    if high is not None and count > high:
        raise _Unfit(".selected", f"choose at most {high} option{'s' if high != 1 else ''}")
