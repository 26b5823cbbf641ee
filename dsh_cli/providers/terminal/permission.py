"""The terminal permission prompt: may this tool call run? (``spec/permissions.md``)

One compact prompt under the conversation: who asks to run what (server, tool), the
arguments (sanitised, long values folded), the hints (a destructive call in the warning
colour), and ``1 allow once · 2 allow for this session · 3 always · 4 deny (tab: say why)``.
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import ASK_ABORTED, ASK_CANCELLED, UserInteractionError
from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.permissions.vocabulary import PermissionDecision
from dsh_cli.providers.terminal.text import fit

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import Decision, PermissionRequest

__all__ = ["PermissionPromptState", "TerminalPermissionPrompt", "permission_lines"]

CHOICES: tuple[tuple[Decision, str], ...] = (
    ("allow_once", "allow once"), ("allow_session", "allow for this session"),
    ("allow_always", "always"), ("deny", "deny"))
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


def permission_lines(request: PermissionRequest, state: PermissionPromptState,
                     width: int) -> list[list[tuple[str, str]]]:
    """The prompt as styled lines, each fitted to ``width`` cells (nothing wraps)."""
    width = max(width, 20)
    tool = sanitize_line(request.tool)
    who = sanitize_line(request.server) if request.server else "dsh"
    hints = request.hints
    lines: list[list[tuple[str, str]]] = [
        [("class:title", fit(f" Permission · {who} wants to run {tool}", width))]]
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
    words = [name.replace("_", " ") for name, value in hints.to_json().items() if value]
    if hints.destructive:
        lines.append([("class:warning", fit("   ⚠ destructive: it may change or delete "
                                            "things" + (f" · {', '.join(words)}" if words
                                                        else ""), width))])
    elif words:
        lines.append([("class:hints", fit("   " + " · ".join(words), width))])
    choices: list[tuple[str, str]] = [("", " ")]
    for index, (_, label) in enumerate(CHOICES):
        marker = "› " if index == state.highlight else ""
        text = f"{marker}{index + 1} {label}" + (" (tab: say why)" if index == 3 else "")
        style = "class:current" if index == state.highlight else ""
        if index:
            choices.append(("", " · "))
        choices.append((style, text))
    flat = "".join(text for _, text in choices)
    if len(flat) > width:  # a narrow terminal: the short form, numbers always shown
        choices = [("", fit(" " + " · ".join(f"{'›' if i == state.highlight else ''}{i + 1} "
                                           f"{label.split()[0]}"
                                           for i, (_, label) in enumerate(CHOICES)), width))]
    lines.append(choices)
    if state.reason is not None:
        lines.append([("class:reason", fit(f" why not? {sanitize_line(state.reason)}", width)),
                      ("[SetCursorPosition]", "")])
        keys = "enter deny with this reason · esc back"
    else:
        keys = "1-4 choose · ↑↓ move · enter confirm · tab say why · esc deny"
    lines.append([("class:keys", fit(" " + keys, width))])
    return lines


def summary_line(request: PermissionRequest, decision: PermissionDecision | None,
                 width: int, ending: str | None = None) -> str:
    """The one line left on screen."""
    tool = sanitize_line(request.tool)
    if decision is None:
        return fit(f" ✗ permission for {tool} {ending or 'dismissed'}", width)
    mark = "✗" if decision.decision == "deny" else "✓"
    why = f" ({sanitize_line(decision.message)})" if decision.message else ""
    return fit(f" {mark} {tool}: {SUMMARY[decision.decision]}{why}", width)


class TerminalPermissionPrompt:
    """Asks each permission request inline; ``input``/``output`` are prompt-toolkit's."""

    def __init__(self, *, input: Any = None, output: Any = None, notify: str = "none") -> None:
        self.input = input
        self.output = output
        self.notify = notify
        self.state: PermissionPromptState | None = None

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        from prompt_toolkit.application.current import get_app_session

        session = get_app_session()
        output = self.output or session.output
        state = self.state = PermissionPromptState()
        app = _application(request, state, self.input or session.input, output)
        if self.notify == "bell":
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
                 output: Any) -> Any:
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
        input=input, output=output,
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

