"""``dsh web``: chat in the browser; questions answered in the web composer."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

import click

from dsh_cli.cli.options import agent_options, check_session_flags, web_options
from dsh_cli.core.lines import notice

if TYPE_CHECKING:
    from dsh_cli.providers.web import WebHost
    from dsh_cli.runtime import Runtime

__all__ = ["web", "web_main"]


@click.command()
@agent_options
@web_options
def web(**options: Any) -> None:
    """Chat with the model in the browser; its questions appear in a web composer.

    dsh prints one line, `dsh: open URL`, on stderr; the URL carries the session token.
    """
    check_session_flags(options)
    from dsh_cli.session.interrupts import run_main

    sys.exit(run_main(web_main(options)))


async def web_main(options: dict[str, Any], *, stderr: TextIO | None = None,
                   started: Callable[[WebHost], Any] | None = None) -> int:
    """The whole ``dsh web``; ``started(host)`` lets tests reach the live host."""
    import asyncio
    import contextlib

    from dsh_cli.chat.app import open_chat_session
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.core.events import SessionStarted
    from dsh_cli.session.interrupts import session_guard
    from dsh_cli.session.tools import session_tools
    from dsh_cli.sources import WEB, AnswerOptions, answer_source

    stderr = stderr or sys.stderr
    runtime, plan, status = open_chat_session(options, False, stderr)
    if runtime is None:
        return status
    with session_guard(runtime):
        messages: asyncio.Queue[str] = asyncio.Queue()
        answering = AnswerOptions(WEB, web=True, host=options.get("host") or "127.0.0.1",
                                  port=options.get("port") or 0,
                                  open_browser=options.get("open_browser"),
                                  on_message=messages.put_nowait,
                                  transcript=runtime.loop.messages, stderr=stderr)
        async with contextlib.AsyncExitStack() as stack:
            gate = await stack.enter_async_context(session_tools(runtime, plan, stderr))
            try:
                source = await stack.enter_async_context(
                    answer_source(runtime.ui, answering, gate))
            except HarnessError as error:  # the web host could not start
                report(error, stderr)
                return 1
            stderr.write(notice("serving the chat; ctrl-c to stop\n"))
            stderr.flush()
            runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
            if started is not None:
                assert source.host is not None
                started(source.host)
            if runtime.has_pending_calls:
                await _turn(runtime, None, stderr)
            while True:
                await _turn(runtime, await _next_message(runtime, messages), stderr)


async def _next_message(runtime: Runtime, messages: Any) -> str | None:
    """The page's next message, or None when an async batch's outcome arrived first (the
    turn takes it up; the page answers async batches while the chat is idle)."""
    from dsh_cli.interaction.later import ARRIVED

    later = runtime.ui.later
    later.watch()
    message = await later.next_input(messages.get)  # a Queue.get, cancelled, loses nothing
    return None if message is ARRIVED else message


async def _turn(runtime: Runtime, content: str | None, stderr: TextIO) -> None:
    """One user message; a model error is shown in the page and the chat carries on."""
    from dsh_cli.core.errors import HarnessError, report
    from dsh_cli.core.events import ErrorEvent

    try:
        await runtime.loop.run_turn(content)
    except HarnessError as error:
        runtime.events.emit(ErrorEvent(error.code, error.message))
        report(error, stderr)
