"""``dsh chat`` put together: settings, runtime, question provider, prompt, renderer, REPL."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
from typing import TYPE_CHECKING, Any, TextIO

from dsh_cli.core.lines import for_terminal, notice
from dsh_cli.core.streams import is_terminal
from dsh_cli.core.vendors import ANY_ENDPOINT, DEEPSEEK, OPENAI

if TYPE_CHECKING:
    from dsh_cli.config import Settings
    from dsh_cli.interaction import UserInteractionProvider
    from dsh_cli.runtime import Runtime
    from dsh_cli.session.tools import ToolPlan
    from dsh_cli.sources import Source

__all__ = ["DEMO_NOTICE", "chat_main", "chat_settings", "open_chat_session"]

DEMO_NOTICE = notice(f"no DeepSeek key ({DEEPSEEK.variable} or {ANY_ENDPOINT}) is set, so this "
                     "is the offline demo model; each key goes only to its own endpoint: "
                     f"{DEEPSEEK.variable} to DeepSeek, {OPENAI.variable} to OpenAI (with -m "
                     f"gpt-4o-mini), {ANY_ENDPOINT} to the --base-url you give")


def warm_up_model_client(model_name: str) -> None:
    """Import ``openai`` in the background while the human types the first message."""
    from dsh_cli.models.resolve import needs_api_key

    if not needs_api_key(model_name) or "openai" in sys.modules:
        return

    def load() -> None:
        with contextlib.suppress(Exception):
            import openai  # noqa: F401

    threading.Thread(target=load, name="dsh-warm-openai", daemon=True).start()


def chat_settings(options: dict[str, Any], demo: bool, errors: TextIO,
                  notices: list[str] | None = None) -> Settings:
    """Resolved settings with the demo fallback (chat and web); raises ``ConfigError``.

    The demo notice goes to ``notices`` when given (the chat writes it under its header),
    else straight to ``errors``.
    """
    from dsh_cli.config import load_settings
    from dsh_cli.models.resolve import DEMO

    settings = load_settings(model=DEMO if demo else options.get("model"),
                             base_url=options.get("base_url"),
                             question_timeout=options.get("question_timeout"))
    if not demo and settings.model_is_default and not settings.api_key:
        if notices is not None:
            notices.append(DEMO_NOTICE)
        else:
            errors.write(for_terminal(DEMO_NOTICE, errors) + "\n")
            errors.flush()
        settings = dataclasses.replace(settings, model=DEMO)
    return settings


def open_chat_session(options: dict[str, Any], demo: bool, errors: TextIO,
                      notices: list[str] | None = None
                      ) -> tuple[Runtime | None, ToolPlan, int]:
    """The runtime for ``chat`` or ``web`` and its tool plan, or None and the exit status
    after one error line."""
    from dsh_cli.config import ConfigError
    from dsh_cli.core.errors import report
    from dsh_cli.session.opening import open_session
    from dsh_cli.session.tools import ToolPlan, plan_tools

    try:
        settings = chat_settings(options, demo, errors, notices)
        plan = plan_tools(settings, options, errors, demo=demo)
    except ConfigError as error:
        report(error, errors)
        return None, ToolPlan(), 2
    runtime, status = open_session(settings, options, errors)
    return runtime, plan, status


async def chat_main(options: dict[str, Any], *, demo: bool = False,
                    stdin: TextIO | None = None, stdout: TextIO | None = None,
                    stderr: TextIO | None = None, prompt: Any = None,
                    provider: UserInteractionProvider | None = None) -> int:
    """The whole ``dsh chat``; ``prompt`` and ``provider`` replace the real ones in tests."""
    from dsh_cli.session.interrupts import session_guard
    from dsh_cli.session.tools import session_tools
    from dsh_cli.sources import CHAT, AnswerOptions, answer_source

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    notices: list[str] = []
    runtime, plan, status = open_chat_session(options, demo, stderr, notices)
    if runtime is None:  # no chat runs: "this is the demo model" would contradict the error
        return status
    from dsh_cli.chat.commands import COMMANDS

    answering = AnswerOptions(CHAT, plain=bool(options.get("plain")), provider=provider,
                              stdin=stdin, stdout=stdout, stderr=stderr,
                              commands=frozenset(COMMANDS))
    with session_guard(runtime), contextlib.ExitStack() as stack:
        async with (session_tools(runtime, plan, stderr) as gate,
                    answer_source(runtime.ui, answering, gate) as source):
            return await _converse(runtime, source, stack, stdin, stdout, stderr,
                                   prompt=prompt, notices=notices)


async def _converse(runtime: Runtime, source: Source, stack: contextlib.ExitStack,
                    stdin: TextIO, stdout: TextIO, stderr: TextIO, *, prompt: Any,
                    notices: list[str]) -> int:
    from dsh_cli.chat.alert import QuestionAlert
    from dsh_cli.chat.prompt import PlainPrompt, TerminalPrompt, history_path
    from dsh_cli.chat.repl import ChatRepl
    from dsh_cli.core.events import SessionStarted
    from dsh_cli.transcript import TranscriptRenderer, color_enabled

    plain = source.name == "plain"
    if prompt is None and source.lines is not None:
        # the plain provider's own line reader: the prompt and its questions share stdin
        prompt = PlainPrompt(source.lines, stderr, echo=not is_terminal(stdin))
    if prompt is None:
        prompt = TerminalPrompt(history=history_path())
    renderer = TranscriptRenderer(stdout, color=not plain and color_enabled(stdout),
                                  wrap=not plain and is_terminal(stdout))
    stack.callback(runtime.events.subscribe(renderer))
    notify = runtime.settings.notify
    alert_stream = stderr if plain else stdout
    stack.callback(runtime.events.subscribe(
        QuestionAlert(alert_stream, "bell" if plain and notify == "osc9" else notify)))
    runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
    runtime.model.on_retry = renderer.retry_notice  # a real API says why it waits
    # the header first, then what dsh has to say, then the conversation it resumes
    width = _terminal_columns() if renderer.wrap else 0
    header = _resumed(runtime) if runtime.resumed else _greeting(runtime)
    renderer.line(fit_header(header, width), dim=True)
    _write_notices(notices, stderr)
    if runtime.resumed:
        renderer.replay(runtime.loop.messages)
        renderer.line(fit_header(_greeting(runtime), width), dim=True)
    warm_up_model_client(runtime.model.name)
    repl = ChatRepl(runtime, prompt, renderer, errors=stderr)
    return await repl.run()


def _greeting(runtime: Runtime) -> str:
    return (f"dsh · model {runtime.model.name} · session {runtime.session_id} · "
            "/help for commands · ctrl-d to exit")


def _terminal_columns() -> int:
    """The terminal's columns (0 when unknown): the header is laid out to fit them."""
    import shutil

    return shutil.get_terminal_size((0, 0)).columns


def fit_header(header: str, width: int) -> str:
    """``header`` in lines of at most ``width`` cells, broken after a `` · `` where it can,
    else between words; never inside a word that fits a line (``/help for comman|ds``)."""
    import textwrap

    from dsh_cli.core.sanitize import display_width

    if width <= 0 or display_width(header) <= width:
        return header
    lines: list[str] = []
    line = ""
    for part in header.split(" · "):
        joined = f"{line} · {part}" if line else part
        if display_width(joined) <= width:
            line = joined
            continue
        if line:
            lines.append(line)
        # a part wider than the terminal breaks between its words (a long path, mid-word)
        pieces = textwrap.wrap(part, width) or [part]
        lines.extend(pieces[:-1])
        line = pieces[-1]
    lines.append(line)
    return "\n".join(lines)


def _resumed(runtime: Runtime) -> str:
    """The first line of a resumed chat: which session, and the question waiting, if any."""
    line = f"dsh · resumed session {runtime.session_id}"
    store = runtime.store
    if runtime.has_pending_calls and store is not None:
        # a batch is open while its tool call has no result, whatever its status says
        open_calls = {call.id for call in runtime.loop.pending_tool_calls()}
        batches = [batch for batch in store.question_batches(runtime.session_id)
                   if batch.call_id in open_calls]
        if batches:
            line += f" · pending question from {_clock(batches[-1].created_at)}"
    return line


def _clock(stamp: str) -> str:
    """``HH:MM`` in local time from a stored ISO timestamp (the stamp itself if unreadable)."""
    from dsh_cli.core.clock import local_time

    return local_time(stamp, "%H:%M")


def _write_notices(notices: list[str], stream: TextIO) -> None:
    for line in notices:
        stream.write(for_terminal(line, stream) + "\n")
    stream.flush()
