"""``dsh run``: one non-interactive agent run for scripts and CI. It never hangs.

stdout gets only the final assistant message (or, with ``--jsonl``, only JSON lines).
Questions are answered by exactly one source, the first that applies: ``--jsonl``,
``--web``, ``--answers FILE``, ``--plain``, the terminal (stdin and stderr both terminals,
unless ``--no-input``); with none, ``ask_user_question`` fails at once with NO_PROVIDER.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from typing import TYPE_CHECKING, Any

import click

from dsh_cli.cli.options import agent_options, check_session_flags, web_options

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.runtime import Runtime
    from dsh_cli.session.tools import ToolPlan
    from dsh_cli.sources import AnswerOptions, Prepared
    from dsh_cli.sources.options import Source
    from dsh_cli.transcript import TranscriptRenderer


RUN_EXAMPLES = """\b
Examples:
  dsh run -m demo "plan a project"            the offline demo model
  dsh run --answers answers.json "Set it up"  CI: answers by question id
  git diff | dsh run -                        the prompt from stdin
  dsh run --jsonl "go" < frames               a controlling program
"""


@click.command(epilog=RUN_EXAMPLES)
@click.argument("prompt", nargs=-1)
# who answers the model's questions first: what a script or CI job looks for
@click.option("--answers", "answers_file", metavar="FILE",
              help="Answer questions by id from a JSON file.")
@click.option("--jsonl", is_flag=True,
              help="Talk to a controlling program in JSON lines on stdin/stdout.")
@click.option("--plain", is_flag=True,
              help="Plain line prompts on stderr, answers read from stdin lines.")
@click.option("--no-input", is_flag=True,
              help="Never ask on the terminal; questions fail with NO_PROVIDER.")
@click.option("--web", is_flag=True, help="Answer questions in the browser.")
@agent_options
@web_options
def run(prompt: tuple[str, ...], **options: Any) -> None:
    """Run the agent once on PROMPT and print its final answer.

    PROMPT '-' reads the prompt from stdin. With -c/-r, PROMPT is optional: a question
    batch that was pending is asked again first.
    """
    text = " ".join(prompt) if prompt else None
    # stdin carries the prompt: questions go to the terminal on /dev/tty, as dsh ask's do
    options["stdin_busy"] = text == "-"
    if text == "-":
        if options["jsonl"]:
            raise click.UsageError("PROMPT '-' cannot be combined with --jsonl "
                                   "(stdin has another job)")
        if options["plain"] and _answer_options(options).terminal != "tty":
            raise click.UsageError("PROMPT '-' with --plain needs a terminal to read the "
                                   "answers from (stdin holds the prompt)")
        text = sys.stdin.read()
    if text is not None and not text.strip():  # "" or a clean tree's empty `git diff`
        from dsh_cli.core.errors import USAGE, format_line

        why = ("the prompt read from stdin is empty" if prompt == ("-",) else
               "the prompt is empty: give a PROMPT (or '-' to read it from stdin)")
        sys.stderr.write(format_line(USAGE, f"{why}; nothing was sent to the model") + "\n")
        sys.exit(2)
    check_session_flags(options)
    resuming = options["continue_"] or options["resume"]
    if text is None and not resuming and not options["jsonl"]:
        raise click.UsageError("give a PROMPT (or '-' to read it from stdin)")

    from dsh_cli.providers.terminal.typeahead import echo_off
    from dsh_cli.session.interrupts import run_main
    from dsh_cli.sources import draws_on_terminal

    # keys typed before a question is drawn are never echoed raw (the UI discards them)
    with echo_off(draws_on_terminal(_answer_options(options))):
        status = run_main(_main(text, options))
    sys.exit(status)


def print_final(text: str) -> None:
    """The final message: exact on a pipe (scripts get what the model said), sanitised on a
    terminal (model text must not drive it)."""
    if sys.stdout.isatty():
        from dsh_cli.core.sanitize import sanitize

        text = sanitize(text)
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away; the answer has nowhere to go
        pass


def _answer_options(options: dict[str, Any]) -> AnswerOptions:
    from dsh_cli.sources import RUN, AnswerOptions

    return AnswerOptions(RUN, jsonl=options["jsonl"], web=options["web"],
                         answers=options["answers_file"], plain=options["plain"],
                         no_input=options["no_input"], host=options["host"],
                         port=options["port"], open_browser=options["open_browser"],
                         stdin_busy=options.get("stdin_busy", False))


def _prepare(options: dict[str, Any]) -> tuple[Settings, Prepared, ToolPlan]:
    """Settings, the answer source and the tools, before any session: a bad file is exit 2."""
    from dsh_cli.config import load_settings
    from dsh_cli.session.tools import plan_tools
    from dsh_cli.sources import prepare

    settings = load_settings(model=options["model"], base_url=options["base_url"],
                             question_timeout=options["question_timeout"])
    prepared = prepare(_answer_options(options))
    return settings, prepared, plan_tools(settings, options, sys.stderr)


async def _main(text: str | None, options: dict[str, Any]) -> int:
    from dsh_cli.core.errors import NOTHING_TO_RESUME, HarnessError, UsageError, report
    from dsh_cli.session.interrupts import session_guard
    from dsh_cli.session.opening import open_session
    from dsh_cli.session.tools import session_tools

    try:
        settings, source, plan = _prepare(options)
    except HarnessError as error:  # CONFIG_ERROR, ANSWERS_FILE_ERROR
        report(error, sys.stderr)
        return 2
    runtime, status = open_session(settings, options, sys.stderr)
    if runtime is None:
        return status
    with session_guard(runtime):
        if (runtime.resumed and text is None and not options["jsonl"]
                and not runtime.has_pending_calls):
            report(UsageError(f"session {runtime.session_id} has no pending question; "
                              "give a PROMPT to continue it", NOTHING_TO_RESUME), sys.stderr)
            return 2
        async with contextlib.AsyncExitStack() as stack:
            gate = await stack.enter_async_context(session_tools(
                runtime, plan, sys.stderr, can_answer=source.name != "none"))
            try:
                answering = await stack.enter_async_context(source.attach(runtime.ui, gate))
            except HarnessError as error:  # the web host could not start
                report(error, sys.stderr)
                return 1
            return await _drive(runtime, text, answering)


async def _drive(runtime: Runtime, text: str | None, source: Source) -> int:
    from dsh_cli.core.events import SessionStarted

    if source.relay is not None:
        return await _drive_jsonl(runtime, text, source)
    with contextlib.ExitStack() as stack:
        if source.name != "web":  # --web: the page follows the run; stderr keeps its URL line
            if sys.stderr.isatty():
                renderer = _progress_renderer()
                stack.callback(runtime.events.subscribe(renderer))
                runtime.model.on_retry = renderer.retry_notice  # a real API says why it waits
            else:  # a CI log shows why a question or a tool call found nobody to answer
                stack.callback(runtime.events.subscribe(
                    functools.partial(_unanswered_line, no_source=source.name == "none")))
            runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
        final = await _turns(runtime, text)
    if final is None:
        return 1
    print_final(final)
    from dsh_cli.session.later import still_pending_line

    still_pending_line(runtime, sys.stderr)  # still exit 0: the run's answer is out
    return 0


def _unanswered_line(event: object, *, no_source: bool) -> None:
    """One stderr line for each batch or tool call that nothing here could answer."""
    from dsh_cli.core.errors import NO_PERMISSION_PROVIDER, NO_PROVIDER, format_line
    from dsh_cli.core.events import ToolResultEvent

    error = (event.error if isinstance(event, ToolResultEvent) else None) or {}
    code = error.get("code")
    if code == NO_PROVIDER and no_source:  # an answers file names its own missing ids
        message = f"{error.get('message', '')}; use --answers, --plain or --jsonl"
    elif code == NO_PERMISSION_PROVIDER:
        message = str(error.get("message", ""))
    else:
        return
    sys.stderr.write(format_line(code, message) + "\n")
    sys.stderr.flush()


def _progress_renderer() -> TranscriptRenderer:
    from dsh_cli.transcript import TranscriptRenderer, color_enabled

    return TranscriptRenderer(sys.stderr, color=color_enabled(sys.stderr), final_text=False)


async def _turns(runtime: Runtime, text: str | None) -> str | None:
    """Finish a resumed batch, then run PROMPT; the final text, or None on a model error."""
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.session.later import take_up

    final = ""
    try:
        if runtime.has_pending_calls:
            final = await runtime.loop.run_turn(None)
        if text is not None:
            final = await runtime.loop.run_turn(text)
        final = await take_up(runtime, final)
    except HarnessError as error:
        report(error, sys.stderr)
        return None
    return final


async def _drive_jsonl(runtime: Runtime, text: str | None, source: Source) -> int:
    """The relay: events out as JSON lines, frames in; ends at EOF after a completed turn."""
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.events import ErrorEvent, SessionStarted
    from dsh_cli.session.later import still_pending_line

    relay = source.relay
    assert relay is not None
    runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
    try:
        if runtime.has_pending_calls:
            await runtime.loop.run_turn(None)
        if text is not None:
            await runtime.loop.run_turn(text)
        while (message := await _next_input(runtime, relay)) is not None:
            await runtime.loop.run_turn(message or None)
    except HarnessError as error:
        runtime.events.emit(ErrorEvent(error.code, error.message))
        return 1
    still_pending_line(runtime, sys.stderr)
    return 0


async def _next_input(runtime: Runtime, relay: Any) -> str | None:
    """The next ``user/message``, or "" when an async batch's outcome arrived first (a
    turn takes it up); None at the end of input."""
    from dsh_cli.interaction.later import ARRIVED

    later = runtime.ui.later
    later.watch()  # a resumed session's stored batches are asked again from here
    message = await later.next_input(relay.next_user_message)
    return "" if message is ARRIVED else message
