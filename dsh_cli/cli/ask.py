"""``dsh ask``: a question batch in (JSON or flags), the answer batch out on stdout.

The batch goes through a real ``UserInteraction``, so validation, the timeout and
settlement are the seam's. On any failure stdout stays empty and stderr gets one line,
``dsh: CODE: message``; the exit status follows the code (``spec/cli.md``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from dsh_cli.cli.options import web_options
from dsh_cli.core.errors import (
    ANSWERS_FILE_ERROR,
    ASK_ABORTED,
    ASK_CANCELLED,
    ASK_TIMEOUT,
    EMPTY_QUESTIONS,
    INVALID_ANSWER,
    INVALID_QUESTIONS,
    NO_PROVIDER,
    USAGE,
    UsageError,
    UserInteractionError,
)

if TYPE_CHECKING:
    from dsh_cli.interaction import AskUserQuestionAnswer, AskUserQuestionRequest
    from dsh_cli.sources import AnswerOptions

__all__ = ["EXIT_STATUS", "ask"]

PIPED = "<stdin>"  # the request path when stdin was piped in with no REQUEST or -q

EXIT_STATUS = {
    ASK_ABORTED: 1,
    USAGE: 2,
    EMPTY_QUESTIONS: 2,
    INVALID_QUESTIONS: 2,
    INVALID_ANSWER: 2,
    ANSWERS_FILE_ERROR: 2,
    NO_PROVIDER: 3,
    ASK_TIMEOUT: 124,
    ASK_CANCELLED: 130,
}


@click.command()
@click.argument("request_path", metavar="[REQUEST]", required=False)
@click.option("-q", "--question", help="Ask this one question (instead of a REQUEST file).")
@click.option("-o", "--option", "options", multiple=True, metavar="LABEL",
              help="An option of the -q question (repeatable).")
@click.option("--preview", "previews", multiple=True, metavar="LABEL=FILE",
              help="Show FILE's text as the preview of the -q question's option LABEL "
                   "(repeatable).")
@click.option("--multi", is_flag=True, help="The -q question allows several options.")
@click.option("--no-other", is_flag=True,
              help="A strict choice: the -q question takes no free-text Other answer.")
@click.option("--header", help="A short heading for the -q question.")
@click.option("--detail", help="Supporting text shown with the -q question.")
@click.option("--id", "question_id", default="q1", show_default=True, metavar="ID",
              help="The id of the -q question.")
@click.option("--format", "output_format", type=click.Choice(["json", "lines"]),
              default="json", show_default=True,
              help="json: the answer batch; lines: one line per label or text.")
@click.option("--question-timeout", "timeout", type=click.FloatRange(min=0, min_open=True),
              metavar="SECONDS", help="Give up with ASK_TIMEOUT (exit 124) after SECONDS.")
@click.option("--timeout", "timeout", type=click.FloatRange(min=0, min_open=True),
              hidden=True)  # the first spelling; --question-timeout is every command's
@click.option("--jsonl", is_flag=True, help="A controlling program answers over JSON lines.")
@click.option("--answers", "answers_path", metavar="FILE",
              help="Answer from a JSON file mapping question ids to answers.")
@click.option("--plain", is_flag=True, help="Plain line prompts on stderr, answers from stdin.")
@click.option("--web", is_flag=True, help="Answer in the browser.")
@click.option("--keep", is_flag=True,
              help="Leave the one-line summary on the terminal (default: clear the UI).")
@web_options
def ask(request_path: str | None, question: str | None, options: tuple[str, ...],
        previews: tuple[str, ...], multi: bool, no_other: bool, header: str | None,
        detail: str | None, question_id: str,
        output_format: str, timeout: float | None, jsonl: bool, answers_path: str | None,
        plain: bool, web: bool, keep: bool, host: str, port: int,
        open_browser: bool | None) -> None:
    """Ask a question batch (REQUEST file, - for stdin, or -q); print the answer."""
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.session.interrupts import run_main, signal_name
    from dsh_cli.sources import ASK, AnswerOptions

    outcome: dict[str, Any] = {}
    if request_path is None and question is None and not (plain or jsonl) and _stdin_piped():
        request_path = PIPED  # as fzf and gum: a piped stdin is the request
    answer_options = AnswerOptions(
        ASK, jsonl=jsonl, web=web, answers=answers_path, plain=plain, host=host, port=port,
        open_browser=open_browser, stdin_busy=request_path in ("-", PIPED), keep=keep)

    async def main() -> int:
        try:
            request = _build_request(request_path, question, options, previews, multi=multi,
                                     header=header, detail=detail, question_id=question_id,
                                     other=not no_other)
            _check_usage(request, request_path, output_format=output_format, plain=plain,
                         jsonl=jsonl)
            answer = await _ask(request, timeout, answer_options)
        except HarnessError as error:
            outcome["reported"] = True
            report(error, sys.stderr)
            return EXIT_STATUS.get(error.code, 1)
        if not jsonl:  # with --jsonl stdout carries only the relay's JSON lines
            _print_answer(answer, output_format)
        return 0

    from dsh_cli.providers.terminal.typeahead import echo_off
    from dsh_cli.sources import draws_on_terminal

    # keys typed before the UI is drawn are never echoed raw (the UI then discards them)
    with echo_off(draws_on_terminal(answer_options)):
        status = run_main(main())
    name = signal_name(status)
    if name is not None and not outcome.get("reported"):
        report(UserInteractionError(f"interrupted by {name}", ASK_ABORTED), sys.stderr)
    sys.exit(status)


def _build_request(path: str | None, question: str | None, options: tuple[str, ...],
                   previews: tuple[str, ...] = (), *, multi: bool, header: str | None,
                   detail: str | None, question_id: str,
                   other: bool = True) -> AskUserQuestionRequest:
    """The request from a file, stdin or the flags; pydantic shape errors are exit 2."""
    from pydantic import ValidationError

    from dsh_cli.core.shapes import format_validation_error
    from dsh_cli.interaction import AskUserQuestionRequest

    if path is not None and question is not None:
        raise UsageError("give a REQUEST or -q/--question, not both")
    if question is None and (options or previews or multi or header or detail or not other):
        raise UsageError("-o, --preview, --multi, --no-other, --header and --detail need "
                         "-q/--question")
    if path is None and question is None:
        raise UsageError("give a REQUEST file (- for stdin, or pipe it in) or -q/--question")
    if question is not None:
        item: dict[str, Any] = {"id": question_id, "question": question}
        if options:  # only what was given: the relay and the web show these fields
            shown = _read_previews(previews, options)
            item["options"] = [{"label": label, **({"preview": shown[label]} if label in shown
                                                   else {})} for label in options]
            item["multi_select"] = multi
            if not other:
                item["other"] = False
        elif previews:
            raise UsageError("--preview needs the option it previews (-o LABEL)")
        elif not other:
            raise UsageError("--no-other needs the options to choose from (-o LABEL)")
        if header is not None:
            item["header"] = header
        if detail is not None:
            item["detail"] = detail
        data: Any = {"questions": [item]}
    else:
        data = _read_json(path)  # type: ignore[arg-type]
        check_request_fields(data)  # a human wrote it: a misspelt field is an error
    try:
        return AskUserQuestionRequest.model_validate(data)
    except ValidationError as error:
        raise UserInteractionError(format_validation_error(error), INVALID_QUESTIONS) from None


def _read_previews(previews: tuple[str, ...], labels: tuple[str, ...]) -> dict[str, str]:
    """``LABEL=FILE`` pairs to each label's preview text; a usage error names a bad one.

    A file is read only up to one character past the cap, so a huge one is refused
    without ever being held in memory."""
    from dsh_cli.interaction.validation import LIMITS

    shown: dict[str, str] = {}
    for pair in previews:
        label, sep, path = pair.rpartition("=")
        if not sep or not label or not path:
            raise UsageError(f"--preview {pair}: expected LABEL=FILE")
        if label not in labels:
            raise UsageError(f"--preview {pair}: no -o option is labelled {label!r}")
        if label in shown:
            raise UsageError(f"--preview {pair}: {label!r} already has a preview")
        try:
            with open(path, encoding="utf-8") as file:
                # a file's last newline ends its last line; it is not an empty line more
                shown[label] = file.read(LIMITS["preview"] + 1).removesuffix("\n")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            raise UsageError(f"--preview {pair}: cannot read {path}: {reason}") from None
        if len(shown[label]) > LIMITS["preview"]:
            raise UserInteractionError(f"--preview {pair}: {path} is longer than "
                                       f"{LIMITS['preview']} characters", INVALID_QUESTIONS)
    return shown


def check_request_fields(data: Any) -> None:
    """``INVALID_QUESTIONS`` for a request that is not an object or has unknown fields.

    Strict where a human wrote the request (the model-facing tool stays forgiving); the
    known fields are the vocabulary's own, plus the ``multiSelect`` alias.
    """
    from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionOption

    expected = 'expected a JSON object {"questions": [...]}'
    if not isinstance(data, dict):
        raise UserInteractionError(f"request: {expected}, got {_json_kind(data)}",
                                   INVALID_QUESTIONS)
    _refuse_unknown(data, {"questions"}, "request")
    questions = data.get("questions")
    if not isinstance(questions, list):
        return  # the shape check names what is missing or wrong
    item_fields = {*AskUserQuestionItem.model_fields, "multiSelect"}
    option_fields = set(AskUserQuestionOption.model_fields)
    for index, item in enumerate(questions):
        path = f"questions[{index}]"
        if not isinstance(item, dict):
            raise UserInteractionError(f"{path}: expected a JSON object, got {_json_kind(item)}",
                                       INVALID_QUESTIONS)
        _refuse_unknown(item, item_fields, path)
        for number, option in enumerate(item.get("options") or []):
            if isinstance(option, dict):
                _refuse_unknown(option, option_fields, f"{path}.options[{number}]")


def _refuse_unknown(data: dict[str, Any], known: set[str], path: str) -> None:
    unknown = [key for key in data if key not in known]
    if unknown:
        names = ", ".join(f'"{key}"' for key in unknown)
        allowed = ", ".join(sorted(known))
        raise UserInteractionError(f"{path}: unknown field {names} (known: {allowed})",
                                   INVALID_QUESTIONS)


def _json_kind(value: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _stdin_piped() -> bool:
    """Stdin is a pipe or a file, not a terminal (and not closed)."""
    try:
        return not sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _read_json(path: str) -> Any:
    import json

    try:
        if path in ("-", PIPED):
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise UsageError(f"cannot read {path}: {reason}") from None
    if path == PIPED and not text.strip():  # nothing piped in: as if no request was given
        raise UsageError("give a REQUEST file (- for stdin, or pipe it in) or -q/--question")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserInteractionError(f"request: not valid JSON: {error}",
                                   INVALID_QUESTIONS) from None
    except RecursionError:
        raise UserInteractionError("request: JSON nested too deeply",
                                   INVALID_QUESTIONS) from None


def _check_usage(request: AskUserQuestionRequest, path: str | None, *, output_format: str,
                 plain: bool, jsonl: bool) -> None:
    """Usage and request errors found before any UI is shown, or any answer source."""
    from dsh_cli.interaction.validation import check_questions

    if output_format == "lines" and len(request.questions) > 1:
        raise UsageError("--format lines answers a single question only "
                         f"(the request has {len(request.questions)})")
    if path == "-" and (plain or jsonl):
        flag = "--plain" if plain else "--jsonl"
        raise UsageError(f"REQUEST - cannot be used with {flag}: stdin has another job")
    check_questions(request)  # validation comes first, whatever can answer (no NO_PROVIDER)


async def _ask(request: AskUserQuestionRequest, timeout: float | None,
               options: AnswerOptions) -> AskUserQuestionAnswer:
    """Ask through the one answer source the table chooses for ``dsh ask``."""
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.sources import answer_source

    ui = UserInteraction(timeout=timeout)
    async with answer_source(ui, options):
        return await ui.ask(request)


def _print_answer(answer: AskUserQuestionAnswer, output_format: str) -> None:
    """The answer on stdout; on a terminal, nothing in a label may drive it."""
    import json  # after the frame: nothing before it needs json

    on_terminal = sys.stdout.isatty()
    if output_format == "json":
        # the same JSON value either way; on a terminal every non-ASCII character escaped
        text = (json.dumps(answer.to_json(), ensure_ascii=True, separators=(",", ":"))
                if on_terminal else answer.to_compact_json()) + "\n"
    else:
        lines = [*answer.answers[0].selected]
        if answer.answers[0].custom is not None:
            lines.append(answer.answers[0].custom)
        if on_terminal:
            from dsh_cli.core.sanitize import sanitize_line

            lines = [sanitize_line(line) for line in lines]
        text = "".join(f"{line}\n" for line in lines)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away; the answer has nowhere to go
        pass
