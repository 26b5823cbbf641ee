"""Answers by question id from a JSON file, for scripts and CI (``--answers FILE``).

The file maps an id to a list of labels (``selected``), a string (always ``custom``),
``null`` (skip), or an object with ``selected`` or ``custom`` and an optional ``note``
(``{"db": {"selected": ["PostgreSQL"], "note": "v16"}}``). It serves every question
of the run with that id; an id no question asks is ignored (one file can serve several
runs). A batch with ids the file lacks fails with ``NO_PROVIDER`` naming each of them with
its question text, unless the question is optional in a form (an MCP server's: its fields
say which are required) or has a default: then it is skipped and takes its default, and
one line names those left out with no default. An answer that does not fit its question
fails with ``INVALID_ANSWER``. Both are reported through ``report`` (stderr in the CLI) as
well as to the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dsh_cli.core.errors import ANSWERS_FILE_ERROR, AnswersFileError, format_line
from dsh_cli.core.lines import notice
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.core.shapes import format_validation_error
from dsh_cli.core.text import scrub_surrogates_in
from dsh_cli.interaction import (
    INVALID_ANSWER,
    NO_PROVIDER,
    AskContext,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    UserInteractionError,
)
from dsh_cli.interaction.traits import AnsweredBy, Concurrent, Immediate
from dsh_cli.interaction.validation import validate_answer_item

__all__ = ["ANSWERS_FILE_ERROR", "AnswersFileError", "AnswersFileProvider"]


_OBJECT_KEYS = {"selected", "custom", "note"}


def _entry_to_item(question_id: str, value: object, where: str) -> dict[str, Any]:
    if value is None:
        return {"id": question_id, "selected": []}
    if isinstance(value, str):
        return {"id": question_id, "selected": [], "custom": value}
    if isinstance(value, list):
        return {"id": question_id, "selected": value}
    if isinstance(value, dict) and value.keys() & _OBJECT_KEYS:
        # a note alone is a skip with a note: the spec allows one on all three answers
        return {"id": question_id, "selected": value.get("selected") or [],
                "custom": value.get("custom"), "note": value.get("note")}
    raise AnswersFileError(
        f"{where}: the answer to {question_id!r} must be a list of labels, a string, null, "
        "or an object with 'selected', 'custom' or 'note'",
        where,
    )


def _named(questions: list[AskUserQuestionItem]) -> str:
    """Each question by id, with its text (a server's or model's words: sanitised)."""
    return ", ".join(f"{q.id!r} ({json.dumps(sanitize_line(q.question), ensure_ascii=False)})"
                     for q in questions)


class AnswersFileProvider(AnsweredBy, Concurrent, Immediate):
    """Answers from a parsed answers file; ``load`` reads and checks the file's shape."""

    answered_by = "answers file"  # the provenance the store keeps with each answer
    concurrent = True  # it answers from the file at once: a batch never holds the screen
    immediate = True  # no human to wait for: an async answer goes with the next model call

    def __init__(self, answers: dict[str, object], *, source: str = "answers",
                 report: Callable[[str], None] | None = None) -> None:
        self.source = source
        self.report = report
        self._items = {key: _entry_to_item(key, value, source) for key, value in answers.items()}

    @classmethod
    def load(cls, path: str | Path, *, report: Callable[[str], None] | None = None
             ) -> AnswersFileProvider:
        """Read ``path``; an ``AnswersFileError`` naming the file when it is unusable."""
        where = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            raise AnswersFileError(f"cannot read answers file {where}: {reason}", where) from None
        try:
            # a lone surrogate (``"\ud800"``) becomes U+FFFD: the one rule of core/text.py
            data = scrub_surrogates_in(json.loads(text))
        except json.JSONDecodeError as error:
            raise AnswersFileError(f"{where}: not valid JSON: {error}", where) from None
        except RecursionError:
            raise AnswersFileError(f"{where}: JSON nested too deeply", where) from None
        if not isinstance(data, dict):
            raise AnswersFileError(f"{where}: expected a JSON object mapping ids to answers",
                                   where)
        return cls(data, source=where, report=report)

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        # a form from someone other than the model (an MCP server's) says which of its
        # fields are required: one it does not require may be left out of the file
        form = context.request.source is not None
        items, left_out, problems = [], [], []
        missing = False
        for question in context.request.questions:
            raw = self._items.get(question.id)
            if raw is None and not question.required and (form or question.default is not None):
                raw = {"id": question.id}  # a skip: the seam's rules answer it with the default
                if question.default is None:
                    left_out.append(question)
            if raw is None:
                missing = True
                continue
            try:
                item = AskUserQuestionAnswerItem.model_validate(raw)
                items.append(validate_answer_item(question, item, question.id))
            except (UserInteractionError, ValidationError) as error:  # all of them, not the first
                problems.append(error.message if isinstance(error, UserInteractionError)
                                else format_validation_error(error))
        if problems:  # a bad answer is the file's fault first: fix it, then add what is missing
            self._fail(f"{self.source}: bad answer for {'; '.join(problems)}", INVALID_ANSWER)
        if missing:
            self._fail_missing(context)
        if left_out and self.report is not None:  # so a CI author still learns their ids
            self.report(notice(f"{self.source} leaves out {_named(left_out)}: skipped (optional)"))
        return AskUserQuestionAnswer(answers=items)

    def _fail_missing(self, context: AskContext) -> None:
        # every missing id at once, each with its question: how a CI author learns the
        # ids a model chose at run time
        missing = [q for q in context.request.questions if q.id not in self._items]
        self._fail(f"{self.source} has no answer for {_named(missing)}", NO_PROVIDER)

    def _fail(self, message: str, code: str) -> None:
        if self.report is not None:
            self.report(format_line(code, message))
        raise UserInteractionError(message, code)
