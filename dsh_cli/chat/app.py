"""``dsh chat`` put together: settings, runtime, question provider, prompt, renderer, REPL."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
from typing import Any, TextIO

from dsh_cli.core.defaults import KEY_VARIABLES_HINT

__all__ = ["DEMO_NOTICE", "LazyTerminalProvider", "chat_main", "use_plain"]

DEMO_NOTICE = ("dsh: no API key is set, so this is the offline demo model; to use a real "
               f"one, set {KEY_VARIABLES_HINT}, or pick one "
               "with -m/--model and --base-url")


class LazyTerminalProvider:
    """The terminal question UI, imported and opened only when the first question comes."""

    def __init__(self, stack: contextlib.ExitStack, *, target: str = "stdout") -> None:
        self._stack = stack
        self.target = target
        self._provider: Any = None

    async def ask(self, request: Any) -> Any:
        if self._provider is None:
            from dsh_cli.providers.terminal import terminal_provider

            # The chat rings its own alert from the event stream, so the UI does not.
            self._provider = self._stack.enter_context(
                terminal_provider(target=self.target))
        return await self._provider.ask(request)


def use_plain(flag: bool, stdin: TextIO, stdout: TextIO,
              environ: dict[str, str] | None = None) -> bool:
    """Plain line mode: asked for, ``TERM=dumb``, or no terminal to draw on."""
    env = os.environ if environ is None else environ
    if flag or env.get("TERM") == "dumb":
        return True
    return not (_isatty(stdin) and _isatty(stdout))


def _isatty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def warm_up_model_client(model_name: str) -> None:
    """Import ``openai`` in the background while the human types the first message."""
    from dsh_cli.models.resolve import needs_api_key

    if not needs_api_key(model_name) or "openai" in sys.modules:
        return

    def load() -> None:
        with contextlib.suppress(Exception):
            import openai  # noqa: F401

    threading.Thread(target=load, name="dsh-warm-openai", daemon=True).start()


def chat_settings(options: dict[str, Any], demo: bool, errors: TextIO) -> Any:
    """Resolved settings with the demo fallback (chat and web); raises ``ConfigError``."""
    from dsh_cli.config import load_settings
    from dsh_cli.models.resolve import DEMO

    settings = load_settings(model=DEMO if demo else options.get("model"),
                             base_url=options.get("base_url"),
                             question_timeout=options.get("question_timeout"))
    if not demo and settings.model_is_default and not settings.api_key:
        errors.write(DEMO_NOTICE + "\n")
        errors.flush()
        settings = dataclasses.replace(settings, model=DEMO)
    return settings


def open_chat_session(options: dict[str, Any], demo: bool, errors: TextIO) -> tuple[Any, int]:
    """The runtime for ``chat`` or ``web``, or None and the exit status after one error line."""
    from dsh_cli.cli.options import open_session
    from dsh_cli.config import ConfigError

    try:
        settings = chat_settings(options, demo, errors)
    except ConfigError as error:
        errors.write(f"dsh: {error.code}: {error.message}\n")
        return None, 2
    runtime = open_session(settings, options, errors)
    return runtime, 0 if runtime is not None else 1


async def chat_main(options: dict[str, Any], *, demo: bool = False,
                    stdin: TextIO | None = None, stdout: TextIO | None = None,
                    stderr: TextIO | None = None, prompt: Any = None,
                    provider: Any = None) -> int:
    """The whole ``dsh chat``; ``prompt`` and ``provider`` replace the real ones in tests."""
    from dsh_cli.cli.interrupts import session_guard

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    runtime, status = open_chat_session(options, demo, stderr)
    if runtime is None:
        return status

    with session_guard(runtime), contextlib.ExitStack() as stack:
        return await _converse(runtime, options, stack, stdin, stdout, stderr,
                               prompt=prompt, provider=provider)


async def _converse(runtime: Any, options: dict[str, Any], stack: contextlib.ExitStack,
                    stdin: TextIO, stdout: TextIO, stderr: TextIO, *,
                    prompt: Any, provider: Any) -> int:
    from dsh_cli.chat.alert import QuestionAlert
    from dsh_cli.chat.prompt import PlainPrompt, TerminalPrompt, history_path
    from dsh_cli.chat.repl import ChatRepl
    from dsh_cli.core.events import SessionStarted
    from dsh_cli.render import TranscriptRenderer, color_enabled

    plain = use_plain(bool(options.get("plain")), stdin, stdout)
    if provider is None and plain:
        from dsh_cli.providers.plain import PlainProvider

        provider = PlainProvider(stdin, stderr)
        stack.callback(provider.close)
        prompt = prompt or PlainPrompt(_line_reader(provider), stderr, echo=not _isatty(stdin))
    elif provider is None:
        provider = LazyTerminalProvider(stack)
    if prompt is None:
        prompt = TerminalPrompt(history=history_path())
    stack.callback(runtime.ui.register_provider(provider))
    renderer = TranscriptRenderer(stdout, color=not plain and color_enabled(stdout))
    stack.callback(runtime.events.subscribe(renderer))
    notify = runtime.settings.notify
    alert_stream = stderr if plain else stdout
    stack.callback(runtime.events.subscribe(
        QuestionAlert(alert_stream, "bell" if plain and notify == "osc9" else notify)))
    runtime.events.emit(SessionStarted(runtime.session_id, runtime.model.name))
    runtime.model.on_retry = renderer.retry_notice  # a real API says why it waits
    if runtime.resumed:
        renderer.replay(runtime.loop.messages)
    renderer.line(_greeting(runtime), dim=True)
    warm_up_model_client(runtime.model.name)
    repl = ChatRepl(runtime, prompt, renderer, errors=stderr)
    return await repl.run()


def _greeting(runtime: Any) -> str:
    resumed = "resumed " if runtime.resumed else ""
    return (f"dsh · model {runtime.model.name} · {resumed}session {runtime.session_id} · "
            "/help for commands · ctrl-d to exit")


def _line_reader(provider: Any) -> Any:
    """The plain provider's own line reader, so the prompt and its questions share stdin."""
    return provider.lines
