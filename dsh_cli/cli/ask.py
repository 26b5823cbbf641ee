"""``dsh ask``: a question batch in (JSON or flags), the answer batch out on stdout.

The batch goes through a real ``UserInteraction``, so validation, the timeout and
settlement are the seam's. On any failure stdout stays empty and stderr gets one line,
``dsh: CODE: message``; the exit status follows the code (``spec/cli.md``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from dsh_cli.cli.options import web_options

__all__ = ["EXIT_STATUS", "ask"]

USAGE = "USAGE"
EXIT_STATUS = {
    "ASK_ABORTED": 1,
    USAGE: 2,
    "EMPTY_QUESTIONS": 2,
    "INVALID_QUESTIONS": 2,
    "INVALID_ANSWER": 2,
    "ANSWERS_FILE_ERROR": 2,
    "NO_PROVIDER": 3,
    "ASK_TIMEOUT": 124,
    "ASK_CANCELLED": 130,
}


class _Failure(Exception):
    """A failed ask: the one stderr line and the exit status."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@click.command()
@click.argument("request_path", metavar="[REQUEST]", required=False)
@click.option("-q", "--question", help="Ask this one question (instead of a REQUEST file).")
@click.option("-o", "--option", "options", multiple=True, metavar="LABEL",
              help="An option of the -q question (repeatable).")
@click.option("--multi", is_flag=True, help="The -q question allows several options.")
@click.option("--header", help="A short heading for the -q question.")
@click.option("--detail", help="Supporting text shown with the -q question.")
@click.option("--id", "question_id", default="q1", show_default=True, metavar="ID",
              help="The id of the -q question.")
@click.option("--format", "output_format", type=click.Choice(["json", "lines"]),
              default="json", show_default=True,
              help="json: the answer batch; lines: one line per label or text.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Give up with ASK_TIMEOUT (exit 124) after SECONDS.")
@click.option("--jsonl", is_flag=True, help="A controlling program answers over JSON lines.")
@click.option("--answers", "answers_path", metavar="FILE",
              help="Answer from a JSON file mapping question ids to answers.")
@click.option("--plain", is_flag=True, help="Plain line prompts on stderr, answers from stdin.")
@click.option("--web", is_flag=True, help="Answer in the browser.")
@click.option("--keep", is_flag=True,
              help="Leave the one-line summary on the terminal (default: clear the UI).")
@web_options
def ask(request_path: str | None, question: str | None, options: tuple[str, ...],
        multi: bool, header: str | None, detail: str | None, question_id: str,
        output_format: str, timeout: float | None, jsonl: bool, answers_path: str | None,
        plain: bool, web: bool, keep: bool, host: str, port: int,
        open_browser: bool | None) -> None:
    """Ask a question batch (REQUEST file, - for stdin, or -q); print the answer."""
    from dsh_cli.cli.interrupts import EXIT_CODES, run_main

    outcome: dict[str, Any] = {}

    async def main() -> int:
        try:
            request = _build_request(request_path, question, options, multi=multi,
                                     header=header, detail=detail, question_id=question_id)
            _check_usage(request, request_path, output_format=output_format, plain=plain,
                         jsonl=jsonl)
            answer = await _ask(request, timeout=timeout, jsonl=jsonl,
                                answers_path=answers_path, plain=plain,
                                web={"host": host, "port": port, "open_browser": open_browser}
                                if web else None,
                                request_from_stdin=request_path == "-", keep=keep)
        except _Failure as failure:
            outcome["reported"] = True
            click.echo(f"dsh: {failure.code}: {failure.message}", err=True)
            return EXIT_STATUS.get(failure.code, 1)
        if not jsonl:  # with --jsonl stdout carries only the relay's JSON lines
            _print_answer(answer, output_format)
        return 0

    import os

    from dsh_cli.providers.terminal.typeahead import echo_off

    # keys typed before the UI is drawn must not be echoed raw (the UI then discards them)
    drawn = not (jsonl or web or answers_path or plain) and os.environ.get("TERM") != "dumb"
    with echo_off(drawn):
        status = run_main(main())
    if status in EXIT_CODES.values() and not outcome.get("reported"):
        name = {130: "SIGINT", 143: "SIGTERM", 129: "SIGHUP"}[status]
        click.echo(f"dsh: ASK_ABORTED: interrupted by {name}", err=True)
    sys.exit(status)


def _build_request(path: str | None, question: str | None, options: tuple[str, ...], *,
                   multi: bool, header: str | None, detail: str | None,
                   question_id: str) -> Any:
    """The request from a file, stdin or the flags; pydantic shape errors are exit 2."""
    from pydantic import ValidationError

    from dsh_cli.core.shapes import format_validation_error
    from dsh_cli.interaction import AskUserQuestionRequest

    if path is not None and question is not None:
        raise _Failure(USAGE, "give a REQUEST or -q/--question, not both")
    if question is None and (options or multi or header or detail):
        raise _Failure(USAGE, "-o, --multi, --header and --detail need -q/--question")
    if path is None and question is None:
        raise _Failure(USAGE, "give a REQUEST file (- for stdin) or -q/--question")
    if question is not None:
        item: dict[str, Any] = {"id": question_id, "question": question}
        if options:  # only what was given: the relay and the web show these fields
            item["options"] = [{"label": label} for label in options]
            item["multi_select"] = multi
        if header is not None:
            item["header"] = header
        if detail is not None:
            item["detail"] = detail
        data: Any = {"questions": [item]}
    else:
        data = _read_json(path)  # type: ignore[arg-type]
    try:
        return AskUserQuestionRequest.model_validate(data)
    except ValidationError as error:
        raise _Failure("INVALID_QUESTIONS", format_validation_error(error)) from None


def _read_json(path: str) -> Any:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise _Failure(USAGE, f"cannot read {path}: {reason}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _Failure("INVALID_QUESTIONS", f"request: not valid JSON: {error}") from None


def _check_usage(request: Any, path: str | None, *, output_format: str, plain: bool,
                 jsonl: bool) -> None:
    """Usage errors found before any UI is shown."""
    if output_format == "lines" and len(request.questions) > 1:
        raise _Failure(USAGE, "--format lines answers a single question only "
                              f"(the request has {len(request.questions)})")
    if path == "-" and (plain or jsonl):
        flag = "--plain" if plain else "--jsonl"
        raise _Failure(USAGE, f"REQUEST - cannot be used with {flag}: stdin has another job")


async def _ask(request: Any, *, timeout: float | None, jsonl: bool, answers_path: str | None,
               plain: bool, web: dict[str, Any] | None, request_from_stdin: bool,
               keep: bool = False) -> Any:
    """Ask through the first answer source that applies."""
    from dsh_cli.interaction import HarnessError, UserInteraction

    ui = UserInteraction(timeout=timeout)
    try:
        if jsonl:
            return await _ask_relay(ui, request)
        if web is not None:
            return await _ask_web(ui, request, **web)
        if answers_path is not None:
            from dsh_cli.providers.answers_file import AnswersFileError, AnswersFileProvider

            try:
                ui.register_provider(AnswersFileProvider.load(answers_path))
            except AnswersFileError as error:
                raise _Failure(error.code, error.message) from None
            return await ui.ask(request)
        if plain:
            from dsh_cli.providers.plain import PlainProvider

            ui.register_provider(PlainProvider(sys.stdin, sys.stderr))
            return await ui.ask(request)
        return await _ask_terminal(ui, request, request_from_stdin, keep)
    except HarnessError as error:
        raise _Failure(error.code, error.message) from None


async def _ask_relay(ui: Any, request: Any) -> Any:
    from dsh_cli.providers.relay import JsonLinesRelay

    relay = JsonLinesRelay(ui, input=sys.stdin.buffer, output=sys.stdout, questions_only=True)
    ui.register_provider(relay.provider)
    await relay.start()
    try:
        return await ui.ask(request)
    finally:
        await relay.close()


async def _ask_web(ui: Any, request: Any, *, host: str, port: int,
                   open_browser: bool | None) -> Any:
    from dsh_cli.cli.web import browser_available
    from dsh_cli.providers.web import WebHost

    web = WebHost(ui, host=host, port=port,
                  open_browser=browser_available() if open_browser is None else open_browser)
    await web.start()
    dispose = ui.register_provider(web.provider)
    try:
        return await ui.ask(request)
    finally:
        dispose()
        await web.close()


def _terminal_target(request_from_stdin: bool) -> str | None:
    """Where the UI is drawn: stdout when stdin and stdout are a terminal, else /dev/tty."""
    import os

    if not request_from_stdin and sys.stdin.isatty() and sys.stdout.isatty():
        return "stdout"
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return None
    return "tty"


async def _ask_terminal(ui: Any, request: Any, request_from_stdin: bool,
                        keep: bool = False) -> Any:
    import os

    target = _terminal_target(request_from_stdin)
    if target is None:
        raise _Failure("NO_PROVIDER", "no terminal to ask on; use --answers, --plain or --jsonl")
    if os.environ.get("TERM") == "dumb":
        return await _ask_plain_tty(ui, request, target)
    from dsh_cli.providers.terminal import terminal_provider

    with terminal_provider(target, keep=keep) as provider:
        ui.register_provider(provider)
        return await ui.ask(request)


async def _ask_plain_tty(ui: Any, request: Any, target: str) -> Any:
    """``TERM=dumb``: the plain rendering, on the terminal the UI would have used."""
    from dsh_cli.providers.plain import PlainProvider

    if target == "stdout":
        ui.register_provider(PlainProvider(sys.stdin, sys.stderr))
        return await ui.ask(request)
    with open("/dev/tty", encoding="utf-8") as reader, \
            open("/dev/tty", "w", encoding="utf-8") as writer:
        ui.register_provider(PlainProvider(reader, writer))
        return await ui.ask(request)


def _print_answer(answer: Any, output_format: str) -> None:
    """The answer on stdout; on a terminal, nothing in a label may drive it."""
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
