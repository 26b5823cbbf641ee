"""One opener per row of the answer-source table.

An opener is called with the ``AnswerOptions`` when its row is chosen; what it does at once
is the work that needs no ``UserInteraction`` (reading an answers file, so a bad one fails
before a session is opened). It returns an ``Opener``: called with the ``ui``, an async
context manager that starts the provider, yields its ``Source`` and closes it on the way
out. The table registers and disposes the provider around it. Each opener imports its
provider inside itself, so a row costs nothing until it is chosen.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, TextIO

from dsh_cli.core.streams import is_terminal
from dsh_cli.interaction.traits import AnsweredBy, TakesTurns
from dsh_cli.sources import surroundings
from dsh_cli.sources.options import Source

if TYPE_CHECKING:
    from dsh_cli.interaction import (
        AskContext,
        AskUserQuestionAnswer,
        UserInteraction,
        UserInteractionProvider,
    )
    from dsh_cli.permissions import PermissionDecision, PermissionProvider, PermissionRequest
    from dsh_cli.providers.terminal import TerminalProvider
    from dsh_cli.sources.options import AnswerOptions

__all__ = ["Opener", "answers", "given", "jsonl", "none", "plain", "terminal", "web"]

Opener = Callable[["UserInteraction"], AbstractAsyncContextManager[Source]]


def given(name: str, provider: UserInteractionProvider | None) -> Opener:
    """A provider that needs no starting or closing (a caller's own, an answers file)."""

    @contextlib.asynccontextmanager
    async def opened(ui: UserInteraction) -> AsyncIterator[Source]:
        yield Source(name, provider)

    return opened


def jsonl(options: AnswerOptions) -> Opener:
    """A controlling program over JSON lines on stdin/stdout (relay.md)."""

    @contextlib.asynccontextmanager
    async def opened(ui: UserInteraction) -> AsyncIterator[Source]:
        from dsh_cli.providers.relay import JsonLinesRelay, controller_timeout

        # the binary stream, so undecodable bytes can be refused rather than guessed at
        stdin = getattr(options.stdin, "buffer", options.stdin)
        relay = JsonLinesRelay(ui, input=stdin, output=options.stdout,
                               questions_only=options.door.questions_only,
                               stall=controller_timeout(options.environ))
        await relay.start()
        try:
            # the controller decides permission requests too, by permission/decision frames
            yield Source("jsonl", relay.provider, relay=relay, permissions=relay.permissions)
        finally:
            await relay.close()

    return opened


def web(options: AnswerOptions) -> Opener:
    """The browser composer (web.md): the host is served for as long as the source is open."""

    @contextlib.asynccontextmanager
    async def opened(ui: UserInteraction) -> AsyncIterator[Source]:
        from dsh_cli.providers.web import WebHost

        open_browser = options.open_browser
        if open_browser is None:
            open_browser = surroundings.browser_available(options.environ)
        host = WebHost(ui, host=options.host, port=options.port, open_browser=open_browser,
                       on_message=options.on_message, stderr=options.stderr)
        if options.transcript is not None:
            host.feed.show_messages(options.transcript)
        await host.start()  # a WebError when the address will not do: nothing to close yet
        try:
            # the browser decides permission requests too, on its permission card
            yield Source("web", host.provider, host=host, permissions=host.permissions)
        finally:
            await host.close()

    return opened


def answers(options: AnswerOptions) -> Opener:
    """Answers by question id from a file, read now: an unusable file fails before anything."""
    from dsh_cli.providers.answers_file import AnswersFileProvider

    assert options.answers is not None
    report = _writer(options.stderr) if options.door.reports_answer_failures else None
    return given("answers", AnswersFileProvider.load(options.answers, report=report))


def plain(options: AnswerOptions) -> Opener:
    """The line rendering: on stdin and stderr, or on /dev/tty where a dumb terminal is that."""

    @contextlib.asynccontextmanager
    async def opened(ui: UserInteraction) -> AsyncIterator[Source]:
        from dsh_cli.providers.plain import PlainProvider
        from dsh_cli.providers.plain_permission import PlainPermissionPrompt

        with contextlib.ExitStack() as stack:
            reader, writer = options.stdin, options.stderr
            if options.terminal == "tty" and (not options.plain or options.stdin_busy):
                reader = stack.enter_context(open(surroundings.TTY, encoding="utf-8"))
                writer = stack.enter_context(open(surroundings.TTY, "w", encoding="utf-8"))
            provider = PlainProvider(reader, writer, discuss=options.door.converses,
                                     commands=options.commands, later=ui.later)
            stack.callback(provider.close)
            # one reader per stdin: questions and permission requests take lines in order
            permissions = PlainPermissionPrompt(provider.lines, writer,
                                                echo=not is_terminal(reader))
            yield Source("plain", provider, permissions, lines=provider.lines)

    return opened


def terminal(options: AnswerOptions) -> Opener:
    """The interactive question UI on the door's terminal, loaded when the first batch comes."""

    @contextlib.asynccontextmanager
    async def opened(ui: UserInteraction) -> AsyncIterator[Source]:
        assert options.terminal is not None
        with contextlib.ExitStack() as stack:
            lazy = LazyTerminal(stack, options.terminal, keep=options.keep,
                                interrupt=options.door.interrupts,
                                discuss=options.door.converses)
            yield Source("terminal", lazy, lazy.permissions)

    return opened


def none(options: AnswerOptions) -> Opener:
    """Nothing answers: a question fails with NO_PROVIDER (at once, for a door that says why)."""
    if options.door.nobody is not None:
        from dsh_cli.core.errors import NO_PROVIDER, UserInteractionError

        raise UserInteractionError(options.door.nobody, NO_PROVIDER)
    return given("none", None)


def _writer(stream: TextIO) -> Callable[[str], None]:
    """Each line written and flushed at once (a failure is seen while the run goes on)."""

    def write(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    return write


class LazyTerminal(AnsweredBy, TakesTurns):
    """The terminal question UI, imported and opened only when the first question comes.

    prompt-toolkit then costs nothing to a session that never asks, and the chat's own
    prompt is drawn before the question UI is ever loaded.
    """

    takes_turns = True  # it draws: async batches wait for the end of the turn
    answered_by = "terminal"  # the provenance the store keeps with each answer

    def __init__(self, stack: contextlib.ExitStack, target: str, *, keep: bool = True,
                 interrupt: bool = False, discuss: bool = False) -> None:
        self._stack = stack
        self.target = target
        self.keep = keep
        self.interrupt = interrupt
        self.discuss = discuss
        self._provider: TerminalProvider | None = None
        self.permissions = LazyPermissionPrompt(self)

    def opened(self) -> TerminalProvider:
        """The terminal provider, opened on first use (by a question or a permission request)."""
        if self._provider is None:
            from dsh_cli.providers.terminal import terminal_provider

            # notify stays "none": a door that wants an alert rings it from the event stream
            self._provider = self._stack.enter_context(terminal_provider(
                self.target, keep=self.keep, interrupt=self.interrupt, discuss=self.discuss))
        return self._provider

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        return await self.opened().ask(context)


class LazyPermissionPrompt:
    """The terminal permission prompt on the very terminal of its ``LazyTerminal``."""

    def __init__(self, terminal: LazyTerminal) -> None:
        self.terminal = terminal
        self._prompt: PermissionProvider | None = None

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        if self._prompt is None:
            from dsh_cli.providers.terminal.permission import TerminalPermissionPrompt

            opened = self.terminal.opened()
            # the transcript reports each decision: the prompt leaves no line of its own
            self._prompt = TerminalPermissionPrompt(input=opened.input, output=opened.output,
                                                    summary=False)
        return await self._prompt.decide(request, rpc_id)
