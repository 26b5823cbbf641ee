"""``dsh web``: chat in the browser; questions answered in the web composer."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

import click

from dsh_cli.cli.options import agent_options, web_options

__all__ = ["browser_available", "web", "web_main"]


@click.command()
@agent_options
@web_options
def web(**options: Any) -> None:
    """Chat with the model in the browser; its questions appear in a web composer.

    dsh prints one line, `dsh: open URL`, on stderr; the URL carries the session token.
    """
    if options.get("continue_") and options.get("resume"):
        raise click.UsageError("use -c/--continue or -r/--resume, not both")
    from dsh_cli.cli.interrupts import run_main

    sys.exit(run_main(web_main(options)))


def browser_available(environ: dict[str, str] | None = None) -> bool:
    """Whether ``--open`` is the default: a display to open a browser on."""
    import os

    env = os.environ if environ is None else environ
    if sys.platform in ("darwin", "win32"):
        return not env.get("SSH_CONNECTION")
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


async def web_main(options: dict[str, Any], *, stderr: TextIO | None = None,
                   started: Callable[[Any], Any] | None = None) -> int:
    """The whole ``dsh web``; ``started(host)`` lets tests reach the live host."""
    import asyncio

    from dsh_cli.chat.app import open_chat_session
    from dsh_cli.cli.interrupts import session_guard
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.events import SessionStarted
    from dsh_cli.providers.web import WebHost

    stderr = stderr or sys.stderr
    runtime, status = open_chat_session(options, False, stderr)
    if runtime is None:
        return status
    with session_guard(runtime):
        messages: asyncio.Queue[str] = asyncio.Queue()
        open_browser = options.get("open_browser")
        host = WebHost(runtime.ui, host=options.get("host") or "127.0.0.1",
                       port=options.get("port") or 0,
                       open_browser=browser_available() if open_browser is None else open_browser,
                       on_message=messages.put_nowait, stderr=stderr)
        host.feed.show_messages(runtime.loop.messages)
        try:
            await host.start()
        except HarnessError as error:
            stderr.write(f"dsh: {error.code}: {error.message}\n")
            return 1
        dispose = runtime.ui.register_provider(host.provider)
        try:
            runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
            if started is not None:
                started(host)
            if runtime.has_pending_calls:
                await _turn(runtime, None, stderr)
            while True:
                await _turn(runtime, await messages.get(), stderr)
        finally:
            dispose()
            await host.close()


async def _turn(runtime: Any, content: str | None, stderr: TextIO) -> None:
    """One user message; a model error is shown in the page and the chat carries on."""
    from dsh_cli.core.errors import HarnessError
    from dsh_cli.core.events import ErrorEvent

    try:
        await runtime.loop.run_turn(content)
    except HarnessError as error:
        runtime.events.emit(ErrorEvent(error.code, error.message))
        stderr.write(f"dsh: {error.code}: {error.message}\n")
        stderr.flush()
