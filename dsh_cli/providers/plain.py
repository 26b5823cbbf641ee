"""``PlainProvider``: the line-mode rendering (``--plain``, ``TERM=dumb``, screen readers).

Each question is printed as plain text, one question at a time, and answered with one
line read from ``input``: numbers pick options, other text is the Other answer, and
``/skip``, ``/back`` and ``/cancel`` steer the batch (``/decline`` too, for a batch that
offers it). ``/preview N`` prints option N's preview (options with one are marked
``[p N]``); ``/note TEXT`` attaches a note to the question's answer. A line the
question's rules refuse (``problem_with``) asks again with the reason. A batch that
asks for a review (an MCP server's form) ends on one: enter submits, a number changes
that answer and comes back. No cursor movement, no color, so a screen
reader reads it top to bottom and a script can feed it through a pipe. Prompts and hints
go to ``output`` (stderr when stdout carries the answer).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection
from typing import IO, Any

from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.sanitize import one_line
from dsh_cli.core.streams import is_terminal
from dsh_cli.interaction import (
    AskContext,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    display_label,
    is_recommended,
    problem_with,
    sanitize,
    sanitize_line,
)
from dsh_cli.interaction.traits import AnsweredBy, TakesTurns
from dsh_cli.providers.line_reader import LineReader

__all__ = ["PlainProvider", "parse_numbers"]

PROMPT_WITH_OPTIONS = "answer (numbers, text for Other, /skip, /back, /cancel)> "
PROMPT_TEXT = "answer (text, /skip, /back, /cancel)> "


def prompt_for(question: AskUserQuestionItem, declinable: bool = False) -> str:
    """The prompt line: only the commands and answer forms this question takes."""
    if question.has_options and question.takes_text:
        forms = ["numbers", "text for Other"]
    else:
        forms = ["numbers"] if question.has_options else ["text"]
    if not question.required or question.default is not None:
        forms.append("/skip")
    forms += ["/back", "/cancel"] + (["/decline"] if declinable else [])
    return f"answer ({', '.join(forms)})> "

_OWN_COMMANDS = frozenset({"/skip", "/back", "/cancel", "/decline", "/discuss"})
_SELECTION = re.compile(r"^[\d,\s]+$")
_NUMBERS_THEN_TEXT = re.compile(r"^([\d,\s]*\d)[,\s]+([^\d,\s].*)$")
CONFIRM_PROMPT = "confirm (enter: the text, n: the options with a note, or another answer)> "


class _Hint(Exception):
    """A line that cannot be used: the one-line hint says why; the question is asked again."""


def parse_numbers(line: str) -> list[int] | None:
    """The option numbers of a selection line (order kept, duplicates dropped), else None."""
    if not _SELECTION.match(line) or not any(char.isdigit() for char in line):
        return None
    numbers: list[int] = []
    for part in re.split(r"[,\s]+", line.strip()):
        if part and int(part) not in numbers:
            numbers.append(int(part))
    return numbers


class PlainProvider(AnsweredBy, TakesTurns):
    """Asks each question of a batch as text and reads the answers line by line."""

    takes_turns = True  # draws on the screen: async batches wait for the turn to end
    answered_by = "plain"  # the provenance the store keeps with each answer

    def __init__(self, input: IO[str] | IO[bytes] | None = None,
                 output: IO[str] | None = None, *, discuss: bool = False,
                 commands: Collection[str] = (), later: Any = None) -> None:
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stderr
        # a conversation goes on after the batch (dsh chat): /discuss may leave it
        self.discuss = discuss
        # the conversation's own slash commands: at a question they are never Other text;
        # /pending lists ``later``'s open async batches (``interaction/later.py``)
        self.commands = frozenset(f"/{name}" for name in commands)
        self.later = later
        self._discussable = False  # this batch: the model's own, in such a conversation
        self.lines = LineReader(self.input)
        self._open_prompt = False
        # a terminal echoes what is typed; piped answers are echoed here instead, so the
        # transcript reads "prompt> answer" and each hint starts on a line of its own
        self._echo = not is_terminal(self.input)

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        """Walk the batch; ``/cancel`` raises ASK_CANCELLED, end of input ASK_ABORTED."""
        if self.lines.ended:  # no one can answer: fail without printing a prompt
            raise Outcome.ABORTED.error("input closed")
        questions = context.request.questions
        answers: list[AskUserQuestionAnswerItem | None] = [None] * len(questions)
        index = 0
        # never for a server's form: its answer goes to the server, not to a conversation
        self._discussable = self.discuss and context.request.source is None
        if self._discussable:
            self._write("  (/discuss leaves these questions to talk about them first)\n")
        shown_heading: str | None = None  # a batch of two forms heads each with its own
        reviewing = False  # a question changed from the review goes back to it
        try:
            while True:
                while index < len(questions):
                    heading = context.request.heading(questions[index].id)
                    if heading and heading != shown_heading:
                        self._write(f"── {sanitize_line(heading)}\n")
                        shown_heading = heading
                    current = answers[index]  # coming back: shown, and enter keeps it
                    self._show(context, index, current)
                    step = await self._answer(context, questions[index], index, current)
                    if step is None:
                        index -= 1
                        continue
                    answers[index] = step
                    index = len(questions) if reviewing else index + 1
                if not context.request.review:
                    break
                change = await self._review(context, answers)
                if change is None:
                    break
                index, reviewing = change, True
        finally:
            self._end_prompt()
        return AskUserQuestionAnswer(answers=[item for item in answers if item is not None])

    async def _review(self, context: AskContext,
                      answers: list[AskUserQuestionAnswerItem | None]) -> int | None:
        """The review step of a batch that asks for one: None submits, else the index of
        the question to change."""
        questions = context.request.questions
        rows = [f"  {number}. {_row(question, item)}" for number, (question, item)
                in enumerate(zip(questions, answers, strict=True), start=1)]
        self._write("Review your answers:\n" + "\n".join(rows) + "\n")
        declinable = context.request.declinable
        prompt = ("review (enter to submit, a number to change, /back, /cancel"
                  + (", /decline" if declinable else "") + ")> ")
        while True:
            line = (await self._read(context, prompt)).strip()
            command = line.lower()
            if command in ("", "/submit"):
                return None
            if command == "/back":
                return len(questions) - 1
            self._interpret_command(command, declinable)
            numbers = parse_numbers(line)
            if numbers is not None and len(numbers) == 1 and 1 <= numbers[0] <= len(questions):
                return numbers[0] - 1
            self._write(f"  press enter to submit, or type 1-{len(questions)} to change "
                        "that answer\n")

    async def _answer(self, context: AskContext, question: AskUserQuestionItem, index: int,
                      current: AskUserQuestionAnswerItem | None = None
                      ) -> AskUserQuestionAnswerItem | None:
        """One question's answer (an empty line keeps ``current``); None means ``/back``.

        ``/preview N`` and ``/note TEXT`` answer nothing: the question is asked again, and
        the note goes with the answer then given (or with ``current``, kept)."""
        note = current.note if current is not None else None
        typed: str | None = None  # a line typed at the confirmation: the next answer
        while True:
            line = typed if typed is not None else await self._read(
                context, prompt_for(question, context.request.declinable))
            typed = None
            words = line.split(maxsplit=1)
            command = words[0].lower() if words else ""
            rest = words[1].strip() if len(words) > 1 else ""
            try:
                if command == "/preview":
                    self._write(_preview_block(question, rest))
                    continue
                if command == "/note":
                    note = rest or None
                    self._write(f"  note: {sanitize_line(rest)} (goes with your answer)\n"
                                if note else "  note removed\n")
                    continue
                if command in self.commands and line.strip().lower() not in _OWN_COMMANDS:
                    self._host_command(context, command)
                    continue
                split = _numbers_then_text(question, line.strip())
                if current is not None and not line.strip():
                    item: AskUserQuestionAnswerItem | None = current
                elif split is not None:
                    numbers, rest = split
                    reply = await self._confirm_replacing(context, numbers, rest)
                    if reply is None:  # enter: the whole line is the Other text
                        item = AskUserQuestionAnswerItem(id=question.id, custom=line.strip())
                    elif reply.lower() == "n":  # the options, and the text as their note
                        note = f"{note or ''} {rest}".strip()
                        item = AskUserQuestionAnswerItem(
                            id=question.id,
                            selected=[question.labels[n - 1] for n in sorted(numbers)])
                    else:
                        typed = reply
                        continue
                else:
                    item = self._interpret(question, line.strip(), index,
                                           context.request.declinable)
                if item is not None and item.note != note:
                    item = item.model_copy(update={"note": note})
                return self._checked(question, item)
            except _Hint as hint:
                self._write(f"  {hint}\n")

    def _host_command(self, context: AskContext, command: str) -> None:
        """A chat command typed at a question: ``/pending`` lists the open async batches,
        any other says where it works; the question is asked again."""
        if command == "/pending" and self.later is not None:
            lines = self.later.listing(shown=context.rpc_id)
            self._write("\n".join(lines or ["  no async question is pending"]) + "\n")
            return
        leave = "/discuss to leave them" if self._discussable else "/cancel them"
        raise _Hint(f"{command} works at the chat prompt: answer these questions first, "
                    f"or {leave}")

    async def _confirm_replacing(self, context: AskContext, numbers: list[int],
                                 rest: str) -> str | None:
        """``1 3 extra thing``: the text would replace options 1 and 3, so ask first, as the
        terminal UI does. None for enter (the text), else the line typed ("n", or another
        answer)."""
        picked = ", ".join(str(number) for number in numbers)
        several = "s" if len(numbers) > 1 else ""
        self._write(f"  the text replaces option{several} {picked} · enter: use the text · n: "
                    f"keep {picked} and add \"{sanitize_line(rest)}\" as a note\n")
        reply = (await self._read(context, CONFIRM_PROMPT)).strip()
        return reply or None

    async def _read(self, context: AskContext, prompt: str) -> str:
        """One line after ``prompt``; end of input is ASK_ABORTED."""
        self._write(prompt)
        self._open_prompt = True
        line = await self.lines.readline()
        self._open_prompt = False
        if line is None:
            self._write("\n")
            raise Outcome.ABORTED.error("input closed")
        if self._echo:
            self._write(sanitize_line(line) + "\n")
        if context.deadline is not None:
            context.deadline.stop()  # the human engaged: no countdown from here on
        return line

    def _checked(self, question: AskUserQuestionItem, item: AskUserQuestionAnswerItem | None
                 ) -> AskUserQuestionAnswerItem | None:
        """The seam's own rules, before the next question: the reason, and ask again."""
        if item is None:
            return None
        reason = problem_with(question, item)
        if reason is not None:
            raise _Hint(reason)
        if item.skipped and question.default is not None:
            self._write(f"  using the default: {sanitize_line(question.default_text() or '')}\n")
        return item

    def _interpret(self, question: AskUserQuestionItem, line: str,
                   index: int, declinable: bool = False) -> AskUserQuestionAnswerItem | None:
        command = line.lower()
        self._interpret_command(command, declinable)
        if command == "/skip":
            return AskUserQuestionAnswerItem(id=question.id)
        if command == "/back":
            if index == 0:
                raise _Hint("this is the first question; answer it, /skip or /cancel")
            return None
        if not line.strip(", "):
            raise _Hint(_usage(question))
        numbers = parse_numbers(line) if question.has_options else None
        if numbers is None:
            if not question.takes_text:
                raise _Hint(f"type a number: choose 1-{len(question.labels)}")
            return AskUserQuestionAnswerItem(id=question.id, custom=line)
        labels = question.labels
        wrong = [number for number in numbers if not 1 <= number <= len(labels)]
        if wrong:
            raise _Hint(f"there is no option {wrong[0]}: choose 1-{len(labels)}"
                        + (", or type text for Other" if question.takes_text else ""))
        if len(numbers) > 1 and not question.is_multi:
            raise _Hint("this question takes one answer: type a single number")
        return AskUserQuestionAnswerItem(
            id=question.id, selected=[labels[number - 1] for number in sorted(numbers)]
        )

    def _interpret_command(self, command: str, declinable: bool) -> None:
        """``/cancel`` and (where offered) ``/decline`` and ``/discuss`` end the batch wherever
        they are typed."""
        if command == "/cancel":
            raise Outcome.CANCELLED.error()
        if command == "/discuss" and self._discussable:
            raise Outcome.DISCUSSED.error()
        if command == "/decline" and declinable:
            raise Outcome.DECLINED.error()

    def _show(self, context: AskContext, index: int,
              current: AskUserQuestionAnswerItem | None = None) -> None:
        """The question block; model text is sanitised before it reaches the terminal."""
        question = context.request.questions[index]
        header = f"[{sanitize_line(question.header)}] " if question.header else ""
        several = " (several allowed)" if question.is_multi else ""
        lines = [f"{header}{sanitize(question.question).strip()}{several}"]
        if question.detail:
            lines += [f"  {line}" for line in sanitize(question.detail).strip().splitlines()]
        for number, option in enumerate(question.options or [], start=1):
            text = sanitize_line(display_label(option.label))
            if is_recommended(option.label):
                text += " (Recommended)"
            if option.label in context.last_answers.get(question.id, ()):
                text += _last_answer(context.last_answered.get(question.id))
            if option.description:
                text += f" — {sanitize_line(option.description)}"
            if option.preview is not None:
                text += f" [p {number}]"
            lines.append(f"  {number}. {text}")
        if any(option.preview is not None for option in question.options or []):
            lines.append("  ([p N]: /preview N prints that option's preview; "
                         "/note TEXT adds a note to your answer)")
        lines += _notes(question)
        if current is not None:
            lines.append(f"  (your answer: {_answer_text(question, current)}; enter keeps it)")
        deadline = context.deadline
        if deadline is not None and not deadline.stopped:
            unit = "second" if deadline.seconds == 1 else "seconds"
            lines.append(f"  (answer within {deadline.seconds:g} {unit})")
        self._write("\n".join(lines) + "\n")

    def _end_prompt(self) -> None:
        """Finish a prompt line left open when the batch was settled elsewhere or cancelled."""
        if self._open_prompt:
            self._open_prompt = False
            self._write("\n")

    def _write(self, text: str) -> None:
        self.output.write(text)
        self.output.flush()

    def close(self) -> None:
        """Stop reading input (the reader thread ends with the process)."""
        self.lines.close()


def _numbers_then_text(question: AskUserQuestionItem, line: str
                       ) -> tuple[list[int], str] | None:
    """``1 3 extra thing`` on a question with options and Other: option numbers that make a
    selection of it, then text; None for a line of another shape."""
    if not (question.has_options and question.takes_text):
        return None
    match = _NUMBERS_THEN_TEXT.match(line)
    if match is None:
        return None
    numbers = parse_numbers(match.group(1)) or []
    if not numbers or any(not 1 <= number <= len(question.labels) for number in numbers):
        return None
    if len(numbers) > 1 and not question.is_multi:
        return None
    return numbers, match.group(2).strip()


def _notes(question: AskUserQuestionItem) -> list[str]:
    """The lines an asker's own fields add: the warning, what text must be, the default."""
    notes = []
    if question.warning:
        notes.append(f"  ! {sanitize_line(question.warning)}")
    if question.rule is not None and question.takes_text:
        notes.append(f"  (expects {sanitize_line(question.rule.describe())})")
    if question.is_multi and (question.min_items is not None or question.max_items is not None):
        low, high = question.min_items, question.max_items
        span = f"{low or 0}-{high}" if high is not None else f"at least {low}"
        notes.append(f"  (choose {span})")
    default = question.default_text()
    if default is not None:
        notes.append(f"  (default: {sanitize_line(default)}; /skip uses it)")
    elif question.required:
        notes.append("  (required)")
    return notes


def _preview_block(question: AskUserQuestionItem, number_text: str) -> str:
    """Option N's preview, sanitised (newlines and indentation kept) and indented; or a hint
    naming the options that have one."""
    options = question.options or []
    with_preview = [n for n, option in enumerate(options, start=1) if option.preview is not None]
    if not with_preview:
        raise _Hint("no option of this question has a preview")
    numbers = parse_numbers(number_text)
    if numbers is None or len(numbers) != 1 or numbers[0] not in with_preview:
        marked = ", ".join(str(n) for n in with_preview)
        raise _Hint(f"type /preview N, where N is an option marked [p N]: {marked}")
    option = options[numbers[0] - 1]
    lines = sanitize(option.preview or "").splitlines() or [""]
    count = f"{len(lines)} line" + ("" if len(lines) == 1 else "s")
    label = sanitize_line(display_label(option.label))
    body = "".join(f"    {line}\n" for line in lines)
    return f"  preview of {numbers[0]}. {label} ({count}):\n{body}  (end of preview)\n"


def _row(question: AskUserQuestionItem, item: AskUserQuestionAnswerItem | None) -> str:
    """One review row: the question by its header (else its text on one line), the answer."""
    return f"{one_line(question.header or question.question, 60)}: " \
        f"{_answer_text(question, item)}"


def _answer_text(question: AskUserQuestionItem, item: AskUserQuestionAnswerItem | None) -> str:
    """An answer on one sanitised line, as the review and a revisited question show it."""
    if item is None or item.skipped:
        value = question.skipped_text()
    elif item.custom is not None:
        value = " ".join(item.custom.split())
    else:
        value = ", ".join(display_label(label) for label in item.selected)
    if item is not None and item.note is not None:
        value += f" (note: {' '.join(item.note.split())})"
    return sanitize_line(value)


def _usage(question: AskUserQuestionItem) -> str:
    if question.has_options:
        return "type a number, text for Other, /skip, /back or /cancel"
    return "type your answer, /skip, /back or /cancel"


def _last_answer(origin: dict[str, str] | None) -> str:
    """The mark of an option chosen last time, with when and in which session, if known."""
    if not origin:
        return " (last answer)"
    from dsh_cli.core.clock import local_time
    from dsh_cli.core.sanitize import sanitize_line

    when = local_time(origin.get("answered_at", ""))
    return f" (last answer, {when} in {sanitize_line(origin.get('session_id', '')[:14])})"
