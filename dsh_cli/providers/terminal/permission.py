"""The terminal permission prompt: may this tool call run? (``spec/permissions.md``)

One compact prompt under the conversation, in ``permissions.wording``'s words: who asks to
run what (the agent or the server, the tool), what the tool does, the arguments (sanitised,
long values folded), the server's hints as its claim (a destructive call in the warning
colour), and the four choices one per line, "always" naming what it covers; a narrow
screen gets the short words, still distinct at 40 columns.
A digit decides at once; ``↑``/``↓`` (or ``←``/``→``) move and ``enter`` decides; ``tab``
opens a reason line (``enter`` then denies with that reason, ``esc`` goes back); ``esc``
denies; ``ctrl-c`` dismisses the request (``ASK_CANCELLED``). The screen is restored however
it ends and one summary line stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import ASK_ABORTED, ASK_CANCELLED, UserInteractionError
from dsh_cli.core.sanitize import display_width, sanitize_line
from dsh_cli.permissions import wording
from dsh_cli.permissions.vocabulary import PermissionDecision
from dsh_cli.providers.terminal.text import fit

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import Decision, PermissionRequest

__all__ = ["PermissionPromptState", "TerminalPermissionPrompt", "permission_lines"]

CHOICES: tuple[tuple[Decision, str], ...] = (
    ("allow_once", "allow once"), ("allow_session", "allow for this session"),
    ("allow_always", "always"), ("deny", "deny"))  # the order keys 1-4 choose in
SUMMARY = {"allow_once": "allowed once", "allow_session": "allowed for this session",
           "allow_always": "allowed always", "deny": "denied"}
MAX_ARGUMENT_ROWS = 6
_STYLE = {"title": "bold", "warning": "bold fg:ansired", "hints": "dim", "current": "bold",
          "keys": "dim", "argument": "", "reason": "bold"}


@dataclass
class PermissionPromptState:
    """The prompt's state: the highlighted choice, the reason being typed, the outcome."""

    highlight: int = 0
    reason: str | None = None  # a reason line is open while this is not None
    decision: PermissionDecision | None = None
    dismissed: bool = False
    keys: list[str] = field(default_factory=list)

    def choose(self, index: int) -> None:
        decision = CHOICES[index][0]
        message = (self.reason or "").strip() or None if decision == "deny" else None
        self.decision = PermissionDecision(decision, message)

    def move(self, step: int) -> None:
        self.highlight = (self.highlight + step) % len(CHOICES)


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        return repr(value)


def _keys(state: PermissionPromptState, width: int) -> str:
    if state.reason is not None:
        return "enter deny with this reason · esc back"
    long = "1-4 choose · ↑↓ move · enter confirm · tab say why · esc deny"
    return long if len(long) + 1 <= width else "1-4 · ↑↓ · enter · tab why · esc deny"


def permission_lines(request: PermissionRequest, state: PermissionPromptState,
                     width: int) -> list[list[tuple[str, str]]]:
    """The prompt as styled lines, each fitted to ``width`` cells (nothing wraps)."""
    width = max(width, 20)
    lines: list[list[tuple[str, str]]] = []
    title = next((text for text in (f" Permission · {wording.title(request)}",
                                     f" {wording.title(request)}")
                  if display_width(text) <= width), None)
    if title is not None:
        lines.append([("class:title", title)])
    else:  # the tool's name on a line of its own rather than cut off
        lines.append([("class:title", fit(f" {wording.who(request)} wants to run", width))])
        lines.append([("class:title", fit(f"   {sanitize_line(request.tool)}", width))])
    if (what := wording.description(request)) is not None:
        wrapped = textwrap.wrap(f"what it does: {what}", max(width - 3, 10),
                                subsequent_indent="  ")
        lines.extend([("class:hints", fit(f"   {text}", width))] for text in wrapped[:3])
    arguments = request.arguments
    rows: list[str] = []
    if isinstance(arguments, dict):
        for name, value in arguments.items():
            rows.append(f"{sanitize_line(str(name))}: {sanitize_line(_value_text(value))}")
    elif arguments not in (None, "", {}):
        rows.append(sanitize_line(_value_text(arguments)))
    shown = rows[:MAX_ARGUMENT_ROWS]
    for text in shown:
        lines.append([("class:argument", fit("   " + text, width))])
    if len(rows) > len(shown):
        lines.append([("class:hints", fit(f"   … {len(rows) - len(shown)} more",
                                          width))])
    warning, claimant, phrases = wording.hint_words(request.hints, request.server)
    if claimant is not None:
        style, mark = ("class:warning", "⚠ ") if warning else ("class:hints", "")
        said = f"   {mark}{claimant} {' · '.join(phrases)}"
        if display_width(said) <= width:
            lines.append([(style, said)])
        else:  # one claim a line
            lines.append([(style, fit(f"   {mark}{claimant}", width))])
            lines.extend([(style, fit(f"     {phrase}", width))] for phrase in phrases)
    labels = wording.choice_labels(request)
    if any(len(label) + 5 > width for _, label in labels):  # a narrow screen: the short words
        labels = wording.choice_labels(request, short=True)
    for index, (_, label) in enumerate(labels):
        current = index == state.highlight
        lines.append([("class:current" if current else "",
                       fit(f" {'›' if current else ' '} {index + 1} {label}", width))])
    if state.reason is not None:
        lines.append([("class:reason", fit(f" why not? {sanitize_line(state.reason)}", width)),
                      ("[SetCursorPosition]", "")])
    lines.append([("class:keys", fit(" " + _keys(state, width), width))])
    return lines


def summary_line(request: PermissionRequest, decision: PermissionDecision | None,
                 width: int, ending: str | None = None) -> str:
    """The one line left on screen; an "always" says what it covers and how to undo it."""
    tool = sanitize_line(request.tool)
    if decision is None:
        return fit(f" ✗ permission for {tool} {ending or 'dismissed'}", width)
    mark = "✗" if decision.decision == "deny" else "✓"
    why = f" ({sanitize_line(decision.message)})" if decision.message else ""
    if decision.decision == "allow_always":
        line = f" {mark} {tool}: allowed always for {wording.always_scope(request)} " \
               f"(undo: `{wording.UNDO}`)"
        if display_width(line) <= width:
            return line
        # narrow: what it covers and how to undo it, each on a line of its own
        return "\n".join(fit(text, width) for text in (
            f" {mark} allowed always: {tool}", f"   for {wording.always_scope(request)}",
            f"   undo: `{wording.UNDO}`"))
    return fit(f" {mark} {tool}: {SUMMARY[decision.decision]}{why}", width)


class TerminalPermissionPrompt:
    """Asks each permission request inline; ``input``/``output`` are prompt-toolkit's."""

    def __init__(self, *, input: Any = None, output: Any = None, notify: str = "none",
                 summary: bool = True) -> None:
        self.input = input
        self.output = output
        self.notify = notify
        # summary=False: a transcript below reports the decision, so the prompt leaves
        # nothing behind (said once, not twice)
        self.summary = summary
        self.state: PermissionPromptState | None = None

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        from prompt_toolkit.application.current import get_app_session

        session = get_app_session()
        output = self.output or session.output
        state = self.state = PermissionPromptState()
        app = _application(request, state, self.input or session.input, output,
                           erase=not self.summary)
        if self.notify in ("bell", "auto"):
            output.write_raw("\a")
            output.flush()
        elif self.notify == "osc9":
            text = sanitize_line(request.tool).replace(";", ",")[:80]
            output.write_raw(f"\x1b]9;dsh: permission for {text}\x07")
            output.flush()
        task = asyncio.ensure_future(app.run_async(handle_sigint=False))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            app.ending = summary_line(request, None, output.get_size().columns, "aborted")
            if app.is_running and app.future is not None and not app.future.done():
                app.exit()
            with contextlib.suppress(BaseException):
                await task
            raise
        except EOFError:
            raise UserInteractionError("input closed", ASK_ABORTED) from None
        if state.decision is None:
            raise UserInteractionError("the user dismissed the permission request",
                                       ASK_CANCELLED)
        return state.decision


def _application(request: PermissionRequest, state: PermissionPromptState, input: Any,
                 output: Any, *, erase: bool = False) -> Any:
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window
    from prompt_toolkit.output import ColorDepth
    from prompt_toolkit.styles import Style

    bindings = KeyBindings()
    holder: dict[str, Any] = {}

    def finish(event: Any) -> None:
        width = event.app.output.get_size().columns
        holder["app"].ending = summary_line(request, state.decision, width)
        event.app.exit()

    for number in range(1, len(CHOICES) + 1):
        @bindings.add(str(number), filter=_choosing(state))
        def _digit(event: Any, index: int = number - 1) -> None:
            state.choose(index)
            finish(event)

    @bindings.add("up", filter=_choosing(state))
    @bindings.add("left", filter=_choosing(state))
    def _previous(event: Any) -> None:
        state.move(-1)

    @bindings.add("down", filter=_choosing(state))
    @bindings.add("right", filter=_choosing(state))
    def _next(event: Any) -> None:
        state.move(1)

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        state.choose(3 if state.reason is not None else state.highlight)
        finish(event)

    @bindings.add("tab", filter=_choosing(state))
    def _reason(event: Any) -> None:
        state.reason = ""
        state.highlight = 3

    @bindings.add("escape", eager=True)
    def _escape(event: Any) -> None:
        if state.reason is not None:
            state.reason = None
            return
        state.choose(3)
        finish(event)

    @bindings.add("c-c")
    def _dismiss(event: Any) -> None:
        state.dismissed = True
        holder["app"].ending = summary_line(request, None, event.app.output.get_size().columns)
        event.app.exit()

    @bindings.add("backspace", filter=_typing(state))
    def _backspace(event: Any) -> None:
        state.reason = (state.reason or "")[:-1]

    @bindings.add("<any>", filter=_typing(state))
    def _type(event: Any) -> None:
        text = event.data
        if text.isprintable() and len(state.reason or "") < 500:
            state.reason = (state.reason or "") + text

    def fragments() -> list[tuple[str, str]]:
        app = holder["app"]
        if app.ending is not None:
            return [("", app.ending)]
        out: list[tuple[str, str]] = []
        for number, line in enumerate(permission_lines(request, state,
                                                       app.output.get_size().columns)):
            if number:
                out.append(("", "\n"))
            out.extend(line)
        return out

    control = FormattedTextControl(fragments, focusable=True, show_cursor=True)
    app: Any = Application(
        layout=Layout(Window(control, wrap_lines=False, dont_extend_height=True)),
        key_bindings=bindings, style=Style.from_dict(_STYLE), full_screen=False,
        input=input, output=output, erase_when_done=erase,
        color_depth=ColorDepth.DEPTH_1_BIT if os.environ.get("NO_COLOR") else None)
    app.ending = None
    app.ttimeoutlen = 0.1
    holder["app"] = app
    return app


def _choosing(state: PermissionPromptState) -> Any:
    from prompt_toolkit.filters import Condition

    return Condition(lambda: state.reason is None)


def _typing(state: PermissionPromptState) -> Any:
    from prompt_toolkit.filters import Condition

    return Condition(lambda: state.reason is not None)

