"""``TerminalProvider``: the inline prompt-toolkit question UI behind the seam.

It shows one batch at a time (the seam queues the rest) and always restores the terminal:
on an answer, a cancel (esc, ctrl-c), and when its ``ask`` is cancelled by the seam
(abort, timeout, disposal) or by the process (SIGTERM, SIGHUP). It then leaves a one-line
summary on screen, or (``keep=False``, for ``dsh ask``) clears its area like fzf and gum.
With ``interrupt=True`` (``dsh run``) ``ctrl-c`` is what it is in a shell: SIGINT to the
process, which ends the run; otherwise it cancels the batch. With ``desk=True`` (``dsh
attach``) ``ctrl-d`` closes the desk and a close from outside (SIGHUP) hands the batch back:
it stays pending at its server, and the summary says so (``ASK_ABORTED`` to the desk).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dsh_cli.core.defaults import NOTIFY_CHOICES
from dsh_cli.core.lines import notice
from dsh_cli.core.outcomes import Outcome
from dsh_cli.core.sanitize import one_line
from dsh_cli.core.terminal_alert import encode
from dsh_cli.interaction import (
    AskContext,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    Deadline,
)
from dsh_cli.interaction.traits import AnsweredBy, TakesTurns
from dsh_cli.providers.terminal.state import BatchState
from dsh_cli.providers.terminal.typeahead import discard_typeahead
from dsh_cli.providers.terminal.viewport import Viewport

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples

__all__ = ["TerminalProvider", "terminal_provider"]

_STYLE = {
    "title": "bold",
    "question": "bold",
    "detail": "dim",
    "current": "bold",
    "badge": "bold fg:ansigreen",
    "chosen": "fg:ansigreen",
    "description": "dim",
    "more": "dim",
    "hint": "bold fg:ansiyellow",
    "countdown": "fg:ansicyan",
    "keys": "dim",
    "skipped": "italic",
    "unanswered": "bold fg:ansired",
    "confirm": "bold fg:ansiyellow",
    "source": "bold fg:ansicyan",
    "warning": "bold fg:ansired",
    "note": "dim",
}


class TerminalProvider(AnsweredBy, TakesTurns):
    """Asks each batch inline on a terminal; ``input``/``output`` are prompt-toolkit's."""

    takes_turns = True  # draws on the screen: async batches wait for the turn to end
    answered_by = "terminal"  # the provenance the store keeps with each answer

    def __init__(self, *, input: Any = None, output: Any = None, notify: str = "none",
                 keep: bool = True, interrupt: bool = False, desk: bool = False,
                 discuss: bool = False) -> None:
        if notify not in NOTIFY_CHOICES:
            raise ValueError(f"notify must be one of {', '.join(NOTIFY_CHOICES)}")
        self.input = input
        self.output = output
        self.notify = notify
        self.keep = keep
        self.interrupt = interrupt
        self.desk = desk
        self.discuss = discuss  # a conversation goes on: offer leaving a batch to discuss it
        self.state: BatchState | None = None  # the batch on screen, for tests and callers
        self.view: Viewport | None = None  # what of it the screen shows (scroll, pages)
        self.screen: _Screen | None = None

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        """Show the batch until it is answered or cancelled (``ASK_CANCELLED``)."""
        from prompt_toolkit.application.current import get_app_session

        session = get_app_session()
        output = self.output or session.output
        request = context.request
        own = request.source is not None and request.source.messages
        state = self.state = BatchState(
            list(request.questions), heading=request.heading(), declinable=request.declinable,
            review=request.review, discussable=self.discuss and request.source is None,
            headings=[request.heading(q.id) for q in request.questions] if own else None)
        state.recall(context.last_answers)
        view = self.view = Viewport()
        screen = self.screen = _Screen(state, view, context.deadline, self.input or session.input,
                                       output, keep=self.keep, interrupt=self.interrupt,
                                       desk=self.desk)
        self._alert(output, context.request)
        discard_typeahead(self.input or session.input, output)
        # In raw mode ctrl-c is a key (cancel the batch); a SIGINT from outside belongs to
        # the command, and prompt-toolkit's own handler would remove the command's for good.
        task = asyncio.ensure_future(screen.app.run_async(handle_sigint=False))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            ending = _ending(context.deadline)
            withdrawn = request.signal is not None and request.signal.aborted
            if self.desk and ending == Outcome.ABORTED.word and not withdrawn:
                from dsh_cli.providers.terminal.render import HANDED_BACK

                ending = HANDED_BACK  # the desk is going away; the batch stays at its server
            elif self.desk and withdrawn and request.signal is not None:
                ending = request.signal.reason or ending  # "answered at another desk"
            await screen.close(task, ending)
            raise
        except EOFError:
            raise Outcome.ABORTED.error("input closed") from None
        finally:
            screen.stop_countdown()
        ended = state.ending or Outcome.CANCELLED  # the app ended with nothing chosen
        if ended is Outcome.ANSWERED and state.answer is not None:
            return state.answer
        raise ended.error("the desk was closed" if ended is Outcome.ABORTED else None)

    def _alert(self, output: Any, request: AskUserQuestionRequest) -> None:
        """The terminal alert when a question appears (BEL, or an OSC 9 notification); the
        attach desk rings it per batch, the chat rings its own from the event stream."""
        if self.notify == "none":
            return
        if self.notify in ("bell", "auto"):
            output.write_raw(encode("bell", ""))
        else:
            first = request.questions[0]
            output.write_raw(encode("osc9", notice(one_line(first.header or first.question, 80))))
        output.flush()


def _drop_editing_defaults(app: Any) -> None:
    """Keep only the mouse and cursor-position defaults: the editing ones are inert here.

    prompt-toolkit's emacs and vi bindings apply only while a ``BufferControl`` has focus,
    which never happens in this UI, yet their filters are evaluated on every key (each
    making a throw-away ``Buffer``): a third of a key storm's time. Same behaviour, less work.
    """
    from prompt_toolkit.key_binding import merge_key_bindings
    from prompt_toolkit.key_binding.bindings.cpr import load_cpr_bindings
    from prompt_toolkit.key_binding.bindings.mouse import load_mouse_bindings

    if hasattr(app, "_default_bindings"):
        app._default_bindings = merge_key_bindings([load_mouse_bindings(), load_cpr_bindings()])


def _follow_reflow(app: Any) -> None:
    """After a resize, find the frame's first row where the terminal rewrapped it (reflow.py)."""
    from dsh_cli.providers.terminal.reflow import follow_reflow, terminal_reflows

    if terminal_reflows():
        follow_reflow(app.renderer)


def _inline_application_class() -> Any:
    """prompt-toolkit's ``Application`` with one standing "current buffer".

    The key processor asks for the current buffer twice a key (undo state, vi cursor); with
    no ``BufferControl`` focused, as here, prompt-toolkit builds a fresh throw-away
    ``Buffer`` each time: half of a 726-key storm's time. Nothing here edits a buffer, so
    one empty buffer serves every key.
    """
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer

    class InlineApplication(Application[Any]):
        _standing: Buffer | None = None

        @property
        def current_buffer(self) -> Buffer:
            focused = self.layout.current_buffer
            if focused is not None:
                return focused
            if self._standing is None:
                self._standing = Buffer(name="dsh-no-buffer")
            return self._standing

    return InlineApplication


def _interrupt() -> None:
    """``ctrl-c`` in raw mode does what it does in cooked mode: SIGINT to this process."""
    import signal

    os.kill(os.getpid(), signal.SIGINT)


def _cursor_ends(line: list[tuple[str, str]]) -> bool:
    """Whether the text cursor is the last thing on ``line`` (typing at the end)."""
    from dsh_cli.providers.terminal.text import CURSOR

    for style, text in reversed(line):
        if style == CURSOR[0]:
            return True
        if text:
            return False
    return False


def _ending(deadline: Deadline | None) -> str:
    """Why the UI is being closed from outside: the timeout, or an abort."""
    now = asyncio.get_running_loop().time()
    if deadline is not None and not deadline.stopped and deadline.remaining(now) <= 0.05:
        return Outcome.TIMED_OUT.word
    return Outcome.ABORTED.word


class _Screen:
    """The prompt-toolkit application drawing one ``BatchState`` through its ``Viewport``."""

    def __init__(self, state: BatchState, view: Viewport, deadline: Deadline | None, input: Any,
                 output: Any, *, keep: bool = True, interrupt: bool = False,
                 desk: bool = False) -> None:
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.layout import FormattedTextControl, Layout
        from prompt_toolkit.output import ColorDepth
        from prompt_toolkit.styles import Style

        from dsh_cli.providers.terminal.keys import build_key_bindings
        from dsh_cli.providers.terminal.runs import RunWindow

        self.state = state
        self.view = view
        self.deadline = deadline
        self.ending_line: str | None = None
        self.desk = desk
        self._ticker: asyncio.Task[None] | None = None
        control = FormattedTextControl(self._fragments, focusable=True, show_cursor=True)
        self.window = window = RunWindow(control, wrap_lines=False, dont_extend_height=True,
                        always_hide_cursor=Condition(lambda: not self._cursor_shown()))
        self.app: Any = _inline_application_class()(
            layout=Layout(window),
            key_bindings=build_key_bindings(state, view, on_key=self._on_key,
                                            on_done=self._finish,
                                            on_ctrl_c=_interrupt if interrupt else None,
                                            on_ctrl_d=self._hand_back if desk else None),
            style=Style.from_dict(_STYLE),
            full_screen=False,
            erase_when_done=not keep,
            input=input,
            output=output,
            color_depth=ColorDepth.DEPTH_1_BIT if os.environ.get("NO_COLOR") else None,
            before_render=lambda app: self._start_countdown(),
        )
        self.app.ttimeoutlen = 0.1  # esc answers fast; escape sequences arrive in one read
        _drop_editing_defaults(self.app)
        _follow_reflow(self.app)

    def _cursor_shown(self) -> bool:
        return self.ending_line is None and (self.state.in_text or self.state.noting)

    def _fragments(self) -> StyleAndTextTuples:
        from dsh_cli.providers.terminal.render import render
        from dsh_cli.providers.terminal.runs import take_runs

        runs = self.window.runs
        runs.clear()
        if self.ending_line is not None:
            return [("", self.ending_line)]
        size = self.app.output.get_size()
        lines = render(self.state, size.columns, size.rows, countdown=self._countdown(),
                       closes_desk=self.desk, view=self.view)
        fragments: StyleAndTextTuples = []
        for number, line in enumerate(lines):
            if number:
                fragments.append(("", "\n"))
            kept = take_runs(line, number, runs)
            fragments.extend(kept)
            if kept is line and _cursor_ends(line):  # a line ending in runs has no cursor
                # prompt-toolkit places the cursor only on a drawn cell, else at the frame's
                # top-left; an unstyled blank is a cell it never prints.
                fragments.append(("", " "))
        return fragments

    def _countdown(self) -> str | None:
        deadline = self.deadline
        if deadline is None or deadline.stopped:
            return None
        seconds = math.ceil(deadline.remaining(asyncio.get_running_loop().time()))
        return f"⏱ {seconds}s left · press any key to take your time"

    def _start_countdown(self) -> None:
        if self._ticker is None and self.deadline is not None and not self.deadline.stopped:
            self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        while self.deadline is not None and not self.deadline.stopped:
            await asyncio.sleep(0.5)
            self.app.invalidate()

    def stop_countdown(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()

    def _on_key(self) -> None:
        if self.deadline is not None:
            self.deadline.stop()

    def _hand_back(self, app: Any) -> None:
        """``ctrl-d`` at the desk: close it, the batch left pending at its server (the
        key's ``_finish`` then ends the app)."""
        self.state.hand_back()

    def _finish(self, app: Any) -> None:
        """The batch ended by a key: its summary line, then the app's end."""
        from dsh_cli.providers.terminal.render import BACK_TO_INBOX, HANDED_BACK, summary

        ending = self.state.ending
        said = HANDED_BACK if ending is Outcome.ABORTED \
            else BACK_TO_INBOX if self.desk and ending is Outcome.CANCELLED else None
        self.ending_line = summary(self.state, app.output.get_size().columns, said)
        if not app.future.done():
            app.exit()

    async def close(self, task: asyncio.Future[Any], ending: str) -> None:
        """Close from outside (the ask was cancelled): summary, restore, wait for it."""
        from dsh_cli.providers.terminal.render import summary

        app = self.app
        self.ending_line = summary(self.state, app.output.get_size().columns, ending)
        future = app.future
        if app.is_running and future is not None and not future.done():
            app.exit()  # the app redraws as done (the summary) and leaves raw mode
        else:
            task.cancel()
        with contextlib.suppress(BaseException):
            await task


@contextlib.contextmanager
def terminal_provider(target: str = "stdout", notify: str = "none", *, keep: bool = True,
                      interrupt: bool = False, desk: bool = False, discuss: bool = False
                      ) -> Iterator[TerminalProvider]:
    """A ``TerminalProvider`` drawing on ``stdout``, ``stderr`` or ``tty`` (/dev/tty both ways)."""
    from prompt_toolkit.input import create_input
    from prompt_toolkit.output import create_output

    with contextlib.ExitStack() as stack:
        if target == "tty":
            reader = stack.enter_context(open("/dev/tty", encoding="utf-8"))
            writer = stack.enter_context(open("/dev/tty", "w", encoding="utf-8"))
            input, output = create_input(reader), create_output(writer)
        elif target in ("stdout", "stderr"):
            stream = sys.stdout if target == "stdout" else sys.stderr
            input, output = create_input(sys.stdin), create_output(stream)
        else:
            raise ValueError(f"unknown terminal target {target!r}")
        yield TerminalProvider(input=input, output=output, notify=notify, keep=keep,
                               interrupt=interrupt, desk=desk, discuss=discuss)
