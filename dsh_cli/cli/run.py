"""``dsh run``: one non-interactive agent run for scripts and CI. It never hangs.

stdout gets only the final assistant message (or, with ``--jsonl``, only JSON lines).
Questions are answered by exactly one source, the first that applies: ``--jsonl``,
``--web``, ``--answers FILE``, ``--plain``, the terminal (stdin and stderr both terminals,
unless ``--no-input``); with none, ``ask_user_question`` fails at once with NO_PROVIDER.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from dsh_cli.cli.options import agent_options, web_options


def fail(code: str, message: str, status: int) -> None:
    """One stderr line, then exit with ``status``."""
    click.echo(f"dsh: {code}: {message}", err=True)
    sys.exit(status)


@click.command()
@click.argument("prompt", nargs=-1)
@agent_options
@click.option("--answers", "answers_file", metavar="FILE",
              help="Answer questions by id from a JSON file.")
@click.option("--jsonl", is_flag=True,
              help="Talk to a controlling program in JSON lines on stdin/stdout.")
@click.option("--plain", is_flag=True,
              help="Plain line prompts on stderr, answers read from stdin lines.")
@click.option("--no-input", is_flag=True,
              help="Never ask on the terminal; questions fail with NO_PROVIDER.")
@click.option("--web", is_flag=True, help="Answer questions in the browser.")
@web_options
def run(prompt: tuple[str, ...], **options: Any) -> None:
    """Run the agent once on PROMPT and print its final answer.

    PROMPT '-' reads the prompt from stdin. With -c/-r, PROMPT is optional: a question
    batch that was pending is asked again first.
    """
    text = " ".join(prompt) if prompt else None
    if text == "-":
        if options["plain"] or options["jsonl"]:
            raise click.UsageError("PROMPT '-' cannot be combined with --plain or --jsonl "
                                   "(stdin has another job)")
        text = sys.stdin.read()
    resuming = options["continue_"] or options["resume"]
    if options["continue_"] and options["resume"]:
        raise click.UsageError("use -c/--continue or -r/--resume, not both")
    if text is None and not resuming and not options["jsonl"]:
        raise click.UsageError("give a PROMPT (or '-' to read it from stdin)")

    from dsh_cli.cli.interrupts import run_main
    from dsh_cli.providers.terminal.typeahead import echo_off

    drawn = (not any(options[name] for name in ("jsonl", "web", "answers_file", "plain",
                                                "no_input"))
             and sys.stdin.isatty() and sys.stderr.isatty() and os.environ.get("TERM") != "dumb")
    with echo_off(drawn):  # keys typed before a question is drawn are never echoed raw
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


def _settings(options: dict[str, Any]) -> Any:
    from dsh_cli.config import ConfigError, load_settings

    try:
        return load_settings(model=options["model"], base_url=options["base_url"],
                             question_timeout=options["question_timeout"])
    except ConfigError as error:
        fail(error.code, error.message, 2)


async def _main(text: str | None, options: dict[str, Any]) -> int:
    from dsh_cli.cli.options import open_session

    settings = _settings(options)
    provider = _answer_source(options)  # before the runtime: a bad answers file is exit 2
    runtime = open_session(settings, options, sys.stderr)
    if runtime is None:
        return 1
    if runtime.resumed and text is None and not options["jsonl"] and not runtime.has_pending_calls:
        runtime.close()
        fail("NOTHING_TO_RESUME", f"session {runtime.session_id} has no pending question; "
             "give a PROMPT to continue it", 2)
    from dsh_cli.cli.interrupts import session_guard

    with session_guard(runtime):
        return await _drive(runtime, text, options, provider)


def _answer_source(options: dict[str, Any]) -> Any:
    """The answer source, in the documented order; None for the relay or for nothing."""
    if options["jsonl"]:
        return None
    if options["web"]:
        return "web"
    if options["answers_file"]:
        from dsh_cli.providers.answers_file import AnswersFileError, AnswersFileProvider

        try:
            return AnswersFileProvider.load(options["answers_file"],
                                            report=lambda line: click.echo(line, err=True))
        except AnswersFileError as error:
            fail(error.code, error.message, 2)
    if options["plain"]:
        from dsh_cli.providers.plain import PlainProvider

        return PlainProvider(sys.stdin, sys.stderr)
    if not options["no_input"] and sys.stdin.isatty() and sys.stderr.isatty():
        if os.environ.get("TERM") == "dumb":  # no cursor addressing: the line rendering
            from dsh_cli.providers.plain import PlainProvider

            return PlainProvider(sys.stdin, sys.stderr)
        return "terminal"
    return None


async def _drive(runtime: Any, text: str | None, options: dict[str, Any], provider: Any) -> int:
    from contextlib import ExitStack

    from dsh_cli.core.events import SessionStarted

    with ExitStack() as stack:
        if provider == "terminal":
            from dsh_cli.providers.terminal import terminal_provider

            # ctrl-c at a question interrupts the run (130); esc cancels only the batch
            provider = stack.enter_context(terminal_provider(target="stderr", interrupt=True))
        if options["jsonl"]:
            return await _drive_jsonl(runtime, text)
        if provider == "web":
            return await _drive_web(runtime, text, options)
        if provider is not None:
            stack.callback(runtime.ui.register_provider(provider))
        if sys.stderr.isatty():
            renderer = _progress_renderer()
            stack.callback(runtime.events.subscribe(renderer))
            runtime.model.on_retry = renderer.retry_notice  # a real API says why it waits
        runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
        final = await _turns(runtime, text)
        if final is None:
            return 1
        print_final(final)
        return 0


def _progress_renderer() -> Any:
    from dsh_cli.render import TranscriptRenderer, color_enabled

    return TranscriptRenderer(sys.stderr, color=color_enabled(sys.stderr), final_text=False)


async def _turns(runtime: Any, text: str | None) -> str | None:
    """Finish a resumed batch, then run PROMPT; the final text, or None on a model error."""
    from dsh_cli.core.errors import HarnessError

    final = ""
    try:
        if runtime.has_pending_calls:
            final = await runtime.loop.run_turn(None)
        if text is not None:
            final = await runtime.loop.run_turn(text)
    except HarnessError as error:
        click.echo(f"dsh: {error.code}: {error.message}", err=True)
        return None
    return final


async def _drive_jsonl(runtime: Any, text: str | None) -> int:
    """The relay: events out as JSON lines, frames in; ends at EOF after a completed turn."""
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.events import ErrorEvent, SessionStarted
    from dsh_cli.providers.relay import JsonLinesRelay

    relay = JsonLinesRelay(runtime.ui, input=sys.stdin.buffer, output=sys.stdout)
    dispose = runtime.ui.register_provider(relay.provider)
    await relay.start()
    try:
        runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
        try:
            if runtime.has_pending_calls:
                await runtime.loop.run_turn(None)
            if text is not None:
                await runtime.loop.run_turn(text)
            while (message := await relay.next_user_message()) is not None:
                await runtime.loop.run_turn(message)
        except HarnessError as error:
            runtime.events.emit(ErrorEvent(error.code, error.message))
            return 1
        return 0
    finally:
        dispose()
        await relay.close()


async def _drive_web(runtime: Any, text: str | None, options: dict[str, Any]) -> int:
    """Questions in the browser; the final answer still goes to stdout."""
    from dsh_cli.cli.web import browser_available
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.providers.web import WebHost

    flag = options["open_browser"]
    host = WebHost(runtime.ui, host=options["host"], port=options["port"],
                   open_browser=browser_available() if flag is None else flag)
    try:
        await host.start()
    except HarnessError as error:
        click.echo(f"dsh: {error.code}: {error.message}", err=True)
        return 1
    dispose = runtime.ui.register_provider(host.provider)
    try:
        final = await _turns(runtime, text)
    finally:
        dispose()
        await host.close()
    if final is None:
        return 1
    print_final(final)
    return 0
