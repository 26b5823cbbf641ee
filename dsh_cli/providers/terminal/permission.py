"""The terminal permission prompt: may this tool call run? (``spec/permissions.md``)

One compact prompt under the conversation, in ``permissions.wording``'s words: who asks to
run what (the agent or the server, the tool), what the tool does, the arguments (sanitised,
long values folded), the server's hints as its claim (a destructive call in the warning
colour), and the four choices one per line, "always" naming what it covers; a narrow
screen gets the short words, still distinct at 40 columns.
Every character of what is granted is shown: the tool and each argument wrap (never cut),
newlines and invisible characters show as escapes (``escape_invisible``). Arguments taller
than the screen scroll (``space``/``j`` down, ``k`` up), and allowing waits until their last
row was on screen; deny is always there. What the screen shows of them (the scroll, how far
down was seen, the rows wrapped) is a ``PermissionView`` the drawing writes, apart from the
``PermissionPromptState`` of what the human chose.
Keys typed before the prompt appeared are dropped (``discard_typeahead``, as the question UI
does). A digit decides, but "always" (``3``, or ``enter`` on it) asks first: ``y`` saves it,
any other key goes back. ``↑``/``↓`` (or ``←``/``→``) move and ``enter`` decides; ``tab``
opens a reason line (``enter`` then denies with that reason, ``esc`` goes back); ``esc``
denies, except at the desk (``back=True``), where it goes back to the inbox and leaves the
request pending, as it does for a question (deny is ``4`` there); ``ctrl-c`` dismisses the
request (``ASK_CANCELLED``). The screen is restored however
it ends and one summary line stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_cli.core.decisions import DECIDED_WORDS, DECISIONS
from dsh_cli.core.errors import ASK_ABORTED, ASK_CANCELLED, UserInteractionError
from dsh_cli.core.lines import notice
from dsh_cli.core.sanitize import display_width, escape_invisible, one_line, sanitize_line
from dsh_cli.core.terminal_alert import encode
from dsh_cli.permissions import wording
from dsh_cli.permissions.vocabulary import PermissionDecision
from dsh_cli.providers.terminal.text import cell_width, fit
from dsh_cli.providers.terminal.typeahead import discard_typeahead

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from dsh_cli.permissions.vocabulary import PermissionRequest

__all__ = ["PermissionPromptState", "PermissionView", "TerminalPermissionPrompt",
           "permission_lines"]

ALWAYS = DECISIONS.index("allow_always")
ARGUMENT_INDENT = 5  # continuation rows of an argument start here
_STYLE = {"title": "bold", "warning": "bold fg:ansired", "hints": "dim", "current": "bold",
          "keys": "dim", "argument": "", "reason": "bold"}


@dataclass
class PermissionView:
    """What the screen shows of the arguments: written by ``permission_lines``, scrolled by
    the keys."""

    offset: int = 0  # the first argument row on screen
    rows: int = 0  # argument rows in all (at the width last drawn)
    seen: int = 0  # how many argument rows from the top have been on screen
    wrapped: dict[int, list[str]] = field(default_factory=dict)  # argument rows by width

    @property
    def read_all(self) -> bool:
        """Every argument row has been on screen: allowing is offered only then."""
        return self.seen >= self.rows


@dataclass
class PermissionPromptState:
    """The prompt's state: the highlighted choice, the reason being typed, the outcome."""

    highlight: int = 0
    reason: str | None = None  # a reason line is open while this is not None
    decision: PermissionDecision | None = None
    confirming: bool = False  # "always" was chosen: ``y`` saves it, any other key goes back
    back: bool = False  # at the desk: ``esc`` goes back to the inbox, undecided

    def choose(self, index: int, view: PermissionView) -> bool:
        """Decide for ``DECISIONS[index]``; False while that cannot be decided yet (an allow
        before ``view`` has shown every argument row)."""
        decision = DECISIONS[index]
        if decision != "deny" and not view.read_all:
            return False  # an allow waits until the whole input was on screen
        if decision == "allow_always" and not self.confirming:
            self.confirming, self.highlight = True, index
            return False
        message = (self.reason or "").strip() or None if decision == "deny" else None
        self.decision = PermissionDecision(decision, message)
        return True

    def move(self, step: int) -> None:
        self.highlight = (self.highlight + step) % len(DECISIONS)


def _keys(request: PermissionRequest, state: PermissionPromptState, view: PermissionView,
          width: int) -> str:
    if state.reason is not None:
        return "enter deny with this reason · esc back"
    if state.confirming:
        long = f"y to save always for {wording.always_scope(request)} · any other key back"
        return long if len(long) + 1 <= width else "y to save always · other key back"
    deny = "4 deny · esc inbox" if state.back else "4 or esc deny"
    if not view.read_all:
        long = f"read it all to allow: space/j down · k up · {deny}"
        short = "space/j down · k up · " + ("4 deny · esc inbox" if state.back else "esc deny")
        return long if len(long) + 1 <= width else short
    if state.back:
        long = "1-4 choose · ↑↓ move · enter confirm · tab say why · esc inbox"
        return long if len(long) + 1 <= width else "1-4 · ↑↓ · enter · tab why · esc inbox"
    long = "1-4 choose · ↑↓ move · enter confirm · tab say why · esc deny"
    return long if len(long) + 1 <= width else "1-4 · ↑↓ · enter · tab why · esc deny"


def hard_wrap(text: str, width: int, indent: int) -> list[str]:
    """``text`` broken into rows of ``width`` cells, every character kept (none cut, no
    space dropped at a break); continuation rows start ``indent`` spaces in."""
    from wcwidth import wcwidth

    width = max(width, indent + 2)
    if text.isascii():  # one cell a character (escaped text has no control): slices
        rows = [text[:width]]
        rows.extend(" " * indent + text[start:start + width - indent]
                    for start in range(width, len(text), width - indent))
        return rows
    rows = []
    row: list[str] = []
    used = 0
    for char in text:
        size = max(wcwidth(char), 0)
        if used + size > width and row:
            rows.append("".join(row))
            row, used = [" " * indent], indent
        row.append(char)
        used += size
    rows.append("".join(row))
    return rows


def argument_rows(request: PermissionRequest, width: int) -> list[str]:
    """The arguments as the rows drawn at ``width``: each whole, wrapped where it is wide."""
    return [row for item in wording.arguments(request)
            for row in hard_wrap("   " + item, width, ARGUMENT_INDENT)]


def permission_lines(request: PermissionRequest, state: PermissionPromptState,
                     width: int, height: int | None = None, view: PermissionView | None = None
                     ) -> list[list[tuple[str, str]]]:
    """The prompt as styled lines of at most ``width`` cells: what is granted wraps, the rest
    is fitted. With ``height``, arguments taller than the room left scroll in a window from
    ``view`` (none: a first frame), and ``view`` learns how many of their rows have been on
    screen."""
    width = max(width, 20)
    view = PermissionView() if view is None else view
    lines: list[list[tuple[str, str]]] = []
    title = next((text for text in (f" Permission · {wording.title(request)}",
                                     f" {wording.title(request)}")
                  if display_width(text) <= width), None)
    if title is not None:
        lines.append([("class:title", title)])
    else:  # the tool's name on rows of its own, wrapped rather than cut off
        lines.append([("class:title", fit(f" {wording.who(request)} wants to run", width))])
        lines.extend([("class:title", row)] for row in
                      hard_wrap(f"   {escape_invisible(request.tool)}", width, ARGUMENT_INDENT))
    if (what := wording.description(request)) is not None:
        wrapped = textwrap.wrap(f"what it does: {what}", max(width - 3, 10),
                                subsequent_indent="  ")
        lines.extend([("class:hints", fit(f"   {text}", width))] for text in wrapped[:3])
    if (rows := view.wrapped.get(width)) is None:  # once a width, not once a frame
        rows = view.wrapped[width] = argument_rows(request, width)
    at = len(lines)  # the argument window goes here, once the room left is known
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
    tail: list[list[tuple[str, str]]] = []
    for index, (_, label) in enumerate(labels):
        current = index == state.highlight
        tail.append([("class:current" if current else "",
                      fit(f" {'›' if current else ' '} {index + 1} {label}", width))])
    if state.reason is not None:
        tail.append([("class:reason", fit(f" why not? {sanitize_line(state.reason)}", width)),
                     ("[SetCursorPosition]", "")])
    room = len(rows) if height is None else max(3, height - len(lines) - len(tail) - 2)
    lines[at:at] = _argument_window(rows, view, room, width)
    tail.append([("class:keys", fit(" " + _keys(request, state, view, width), width))])
    return lines + tail


def _argument_window(rows: list[str], view: PermissionView, room: int,
                     width: int) -> list[list[tuple[str, str]]]:
    """At most ``room`` argument rows from ``view.offset``, a "rows a-b of n" marker last
    when they do not all fit; records in ``view`` how far down has been seen."""
    view.rows = len(rows)
    if len(rows) <= room:
        view.offset, view.seen = 0, len(rows)
        return [[("class:argument", row)] for row in rows]
    shown = room - 1
    view.offset = min(max(0, view.offset), len(rows) - shown)
    end = view.offset + shown
    view.seen = max(view.seen, end)
    marks = (f"   rows {view.offset + 1}-{end} of {len(rows)} · space/j down · k up",
             f"   rows {view.offset + 1}-{end} of {len(rows)}")
    mark = next((mark for mark in marks if cell_width(mark) <= width), marks[-1])
    return [*([("class:argument", row)] for row in rows[view.offset:end]),
            [("class:hints", fit(mark, width))]]


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
    return fit(f" {mark} {tool}: {DECIDED_WORDS[decision.decision]}{why}", width)


class TerminalPermissionPrompt:
    """Asks each permission request inline; ``input``/``output`` are prompt-toolkit's."""

    def __init__(self, *, input: Any = None, output: Any = None, notify: str = "none",
                 summary: bool = True, back: bool = False) -> None:
        self.input = input
        self.output = output
        self.notify = notify
        self.back = back  # at the desk: esc goes back to the inbox (ASK_CANCELLED), undecided
        # summary=False: a transcript below reports the decision, so the prompt leaves
        # nothing behind (said once, not twice)
        self.summary = summary
        self.state: PermissionPromptState | None = None
        self.view: PermissionView | None = None  # what of the arguments the screen showed

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        from prompt_toolkit.application.current import get_app_session

        session = get_app_session()
        output = self.output or session.output
        state = self.state = PermissionPromptState(back=self.back)
        view = self.view = PermissionView()
        app = _application(request, state, view, self.input or session.input, output,
                           erase=not self.summary)
        # a digit typed before the prompt was drawn must not grant what nobody saw
        discard_typeahead(self.input or session.input, output)
        if self.notify in ("bell", "auto"):
            output.write_raw(encode("bell", ""))
            output.flush()
        elif self.notify == "osc9":
            output.write_raw(encode("osc9", notice(f"permission for {one_line(request.tool, 80)}")))
            output.flush()
        task = asyncio.ensure_future(app.run_async(handle_sigint=False))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as cancelled:
            columns = output.get_size().columns
            why = cancelled.args[0] if cancelled.args and self.back else None
            if isinstance(why, str) and why:  # at the desk: settled elsewhere, and how
                mark = "✓" if why.endswith("at another desk") else "✗"
                app.ending = fit(f" {mark} permission for {sanitize_line(request.tool)}: "
                                 f"{sanitize_line(why)}", columns)
            else:
                app.ending = summary_line(request, None, columns, "aborted")
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


def _application(request: PermissionRequest, state: PermissionPromptState,
                 view: PermissionView, input: Any, output: Any, *, erase: bool = False) -> Any:
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window
    from prompt_toolkit.output import ColorDepth
    from prompt_toolkit.styles import Style

    bindings = KeyBindings()
    holder: dict[str, Any] = {}

    def measure(app: Any) -> None:
        """The window as the next frame draws it: how far down is seen counts from the key
        that scrolled, not from a frame drawn after keys that came in one read."""
        size = app.output.get_size()
        permission_lines(request, state, size.columns, size.rows, view)

    def finish(event: Any) -> None:
        width = event.app.output.get_size().columns
        holder["app"].ending = summary_line(request, state.decision, width)
        event.app.exit()

    def decide(event: Any, index: int) -> None:
        if state.choose(index, view):
            finish(event)

    for number in range(1, len(DECISIONS) + 1):
        @bindings.add(str(number), filter=_choosing(state))
        def _digit(event: Any, index: int = number - 1) -> None:
            decide(event, index)

    @bindings.add("up", filter=_choosing(state))
    @bindings.add("left", filter=_choosing(state))
    def _previous(event: Any) -> None:
        state.move(-1)

    @bindings.add("down", filter=_choosing(state))
    @bindings.add("right", filter=_choosing(state))
    def _next(event: Any) -> None:
        state.move(1)

    @bindings.add("space", filter=_choosing(state))
    @bindings.add("j", filter=_choosing(state))
    @bindings.add("pagedown", filter=_choosing(state))
    def _scroll_down(event: Any) -> None:
        view.offset += _page(event.app)
        measure(event.app)

    @bindings.add("k", filter=_choosing(state))
    @bindings.add("pageup", filter=_choosing(state))
    def _scroll_up(event: Any) -> None:
        view.offset = max(0, view.offset - _page(event.app))
        measure(event.app)

    @bindings.add("enter", filter=~_confirming(state))
    def _enter(event: Any) -> None:
        decide(event, 3 if state.reason is not None else state.highlight)

    @bindings.add("tab", filter=_choosing(state))
    def _reason(event: Any) -> None:
        state.reason = ""
        state.highlight = 3

    @bindings.add("escape", eager=True, filter=~_confirming(state))
    def _escape(event: Any) -> None:
        if state.reason is not None:
            state.reason = None
            return
        if state.back:  # back to the inbox: the request stays pending for any desk
            tool = sanitize_line(request.tool)
            width = event.app.output.get_size().columns
            holder["app"].ending = fit(f" ↩ permission for {tool} left in the inbox", width)
            event.app.exit()
            return
        decide(event, 3)

    @bindings.add("y", filter=_confirming(state))
    @bindings.add("Y", filter=_confirming(state))
    def _confirm(event: Any) -> None:
        decide(event, ALWAYS)

    @bindings.add("<any>", filter=_confirming(state))
    def _back(event: Any) -> None:
        state.confirming = False  # any key but y: nothing is saved, the choices are back

    @bindings.add("c-c")
    def _dismiss(event: Any) -> None:
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

    def fragments() -> StyleAndTextTuples:
        app = holder["app"]
        if app.ending is not None:
            return [("", app.ending)]
        out: StyleAndTextTuples = []
        size = app.output.get_size()
        for number, line in enumerate(permission_lines(request, state, size.columns,
                                                       size.rows, view)):
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
    measure(app)  # before the first key: a long input is unread until scrolled
    return app


def _page(app: Application[Any]) -> int:
    """Rows a scroll key moves: a little less than a screen, so a row stays in view."""
    return max(1, app.output.get_size().rows // 2)


def _choosing(state: PermissionPromptState) -> Any:
    from prompt_toolkit.filters import Condition

    return Condition(lambda: state.reason is None and not state.confirming)


def _confirming(state: PermissionPromptState) -> Any:
    from prompt_toolkit.filters import Condition

    return Condition(lambda: state.confirming)


def _typing(state: PermissionPromptState) -> Any:
    from prompt_toolkit.filters import Condition

    return Condition(lambda: state.reason is not None)

