"""The transcript renderer: the event stream as text on a terminal (chat, ``dsh run`` stderr).

Assistant text streams as it arrives; reasoning text is dimmed and each of its lines is
marked ``┊`` so it stays distinguishable without color; every tool call ends in one compact
line (``· ask_user_question → answered (2)``, ``· ask_user_question ✗ ASK_CANCELLED``), and a
permission request asked of the human in one more (``✓ mcp__notes__write_note allowed once``,
``✗ mcp__git__git_reset denied: not now``).
All model-written text goes through ``sanitize`` first, so it cannot drive the terminal.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, TextIO

from dsh_cli.core.conversation import conversation_events
from dsh_cli.core.decisions import DECIDED_WORDS
from dsh_cli.core.events import (
    AssistantDelta,
    AssistantMessage,
    ErrorEvent,
    Event,
    PermissionRequested,
    PermissionResolved,
    ReasoningDelta,
    ToolResultEvent,
    TurnCompleted,
    UserMessage,
)
from dsh_cli.core.sanitize import one_line, sanitize

__all__ = ["TranscriptRenderer", "color_enabled"]

DIM = "\x1b[2m"
RED = "\x1b[31m"
RESET = "\x1b[0m"
REASONING_MARK = "┊ "
SUMMARY_WIDTH = 60
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_TOKENS = re.compile(r"\n|[ \t]+|[^\s]+")


def color_enabled(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Color only on a terminal, and never with ``NO_COLOR`` set (no-color.org) or TERM=dumb."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def tool_summary(event: ToolResultEvent) -> tuple[bool, str]:
    """``(failed, text)`` for a tool result's compact line."""
    if event.error:
        return True, one_line(str(event.error.get("code") or event.error.get("name") or "error"),
                              SUMMARY_WIDTH)
    if event.name == "ask_user_question":
        return False, _answer_summary(event.content)
    return False, _result_line(event.content)


def _result_line(content: str) -> str:
    """A result on one line: all of it, spaces collapsed, clipped; how long when it had more.

    Its first line alone is often a lone ``{`` (pretty JSON) or a heading that says nothing.
    """
    lines = content.strip().splitlines()
    if not lines:
        return "ok"
    more = f" ({len(lines)} lines)" if len(lines) > 1 else ""
    return one_line(content, SUMMARY_WIDTH - len(more)) + more


# the transcript sees dsh's own tools only, whose "always" covers the tool as defined now
_PERMISSION_WORDS: dict[str, str] = {
    **DECIDED_WORDS,
    "allow_always": DECIDED_WORDS["allow_always"]
    + " for this tool as defined now (undo: `dsh permissions rm`)"}


def permission_summary(tool: str, event: PermissionResolved) -> tuple[bool, str]:
    """``(refused, text)`` for a settled permission request's compact line."""
    name = one_line(tool, 60)
    if event.decision is None:  # cancelled, aborted, timed out
        return True, f"{name} {one_line(event.outcome, 20)}"
    words = _PERMISSION_WORDS.get(event.decision, one_line(event.decision, 20))
    reason = f": {one_line(event.message, 120)}" if event.message else ""
    return event.decision == "deny", f"{name} {words}{reason}"


def _answer_summary(content: str) -> str:
    try:
        result = json.loads(content)
        answers: list[Any] = result.get("answers", [])
    except (AttributeError, TypeError, ValueError):
        return one_line(content, SUMMARY_WIDTH)
    if result.get("accepted") is True:  # delivery "async": the answer comes later
        return f"pending, ticket {one_line(str(result.get('ticket')), 40)} (/pending)"
    skipped = sum(
        1 for item in answers
        if isinstance(item, dict) and not item.get("selected") and item.get("custom") is None
    )
    answered = len(answers) - skipped
    if not skipped:
        return f"answered ({answered})"
    if not answered:
        return f"skipped ({skipped})"
    return f"answered ({answered}) · skipped ({skipped})"


class TranscriptRenderer:
    """An ``EventStream`` listener writing the conversation to ``stream`` as it happens."""

    def __init__(self, stream: TextIO, *, color: bool, final_text: bool = True,
                 wrap: bool = False) -> None:
        self.stream = stream
        # wrap=True (a terminal): model text is broken between words at the terminal's
        # width, as it streams, instead of mid-word by the terminal itself
        self.wrap = wrap
        self._column = 0
        self._space = ""  # white space held until the next word shows where it falls
        # NO_COLOR wins over whatever the caller decided (no-color.org).
        self.color = color and not os.environ.get("NO_COLOR")
        # final_text=False (``dsh run``'s stderr, whose stdout gets the final answer): text
        # is held until its message shows whether it is intermediate (it calls tools).
        self.final_text = final_text
        self._held: list[str] = []
        self._at_line_start = True
        self._reasoning = False  # inside a dimmed reasoning block
        self._streamed = False  # assistant text arrived since the last assistant message
        self._asked: dict[str, tuple[str, str | None]] = {}  # rpc_id -> (tool, call id)
        self._refused: set[str] = set()  # calls whose refusal was just reported

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantDelta):
            if not self.final_text:
                self._held.append(event.text)
                return
            self._end_reasoning()
            self._write(sanitize(event.text))
            self._streamed = self._streamed or bool(event.text)
        elif isinstance(event, ReasoningDelta):
            self._start_reasoning()
            self._write(sanitize(event.text), prefix=REASONING_MARK)
        elif isinstance(event, AssistantMessage):
            self._end_reasoning()
            if not self.final_text:
                self._held.clear()
                if event.tool_calls:
                    self._write(sanitize(event.content))
            elif not self._streamed and event.content:
                self._write(sanitize(event.content))  # a model that does not stream
            self._streamed = False
            self.finish()
        elif isinstance(event, ToolResultEvent):
            if event.call_id in self._refused:  # its "✗ … denied" line said it already
                self._refused.discard(event.call_id)
                return
            failed, summary = tool_summary(event)
            name = one_line(event.name or "tool", 40)  # a call without a name, or none found
            if failed:
                self.line(f"· {name} {self._style('✗', RED)} {summary}")
            else:
                self.line(f"· {name} → {summary}")
        elif isinstance(event, PermissionRequested):
            self._asked[event.rpc_id] = (event.tool, event.call_id)
            return
        elif isinstance(event, PermissionResolved):
            tool, call_id = self._asked.pop(event.rpc_id, ("tool", None))
            refused, summary = permission_summary(tool, event)
            if refused and call_id is not None:
                self._refused.add(call_id)
            self.line(f"{self._style('✗', RED)} {summary}" if refused else f"✓ {summary}")
        elif isinstance(event, TurnCompleted):
            self.finish()
        elif isinstance(event, UserMessage) and event.ticket:  # an async answer, not typed
            self.line(f"· async question {one_line(event.ticket, 40)} settled: the model is told",
                      dim=True)
        elif isinstance(event, ErrorEvent):
            self.line(f"! {one_line(event.code, 40)}: {one_line(event.message, 200)}")
        else:
            return
        self.stream.flush()

    def replay(self, messages: list[dict[str, Any]], *, last: int = 20) -> None:
        """The end of a stored conversation, compactly, so a resumed chat has its context."""
        for event in conversation_events(messages, last=last):
            if isinstance(event, UserMessage):
                self.line(f"› {one_line(event.content, 200)}", dim=True)
            elif isinstance(event, AssistantMessage) and event.content:
                self.finish()
                self._write(sanitize(event.content))
                self.finish()
            elif isinstance(event, ToolResultEvent):
                self(event)
        self.finish()

    def retry_notice(self, notice: Any) -> None:
        """A model call failed and will be tried again (an ``on_retry`` callback)."""
        self.line(f"· {notice.error.code}: trying again in {notice.delay:.1f}s "
                  f"(attempt {notice.attempt + 1})", dim=True)

    def line(self, text: str, *, dim: bool = False, indent: int | None = None) -> None:
        """A line of our own (not model text) on a line of its own; with ``indent``, wrapped
        at spaces to a terminal's width, its further rows that far in."""
        self.finish()
        if indent is not None:
            from dsh_cli.core.lines import for_terminal

            text = for_terminal(text, self.stream, indent=indent)
        self.stream.write((self._style(text, DIM) if dim else text) + "\n")
        self._at_line_start, self._column = True, 0
        self.stream.flush()

    def finish(self) -> None:
        """Close an open reasoning block and an unfinished line (before a prompt, a UI)."""
        self._space = ""  # white space at the end of a message is not worth a line
        self._end_reasoning()
        if not self._at_line_start:
            self._write("\n")
        self.stream.flush()

    def _style(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _start_reasoning(self) -> None:
        if self._reasoning:
            return
        if not self._at_line_start:
            self._write("\n")
        self._reasoning = True
        if self.color:
            self.stream.write(DIM)

    def _end_reasoning(self) -> None:
        if not self._reasoning:
            return
        self._reasoning = False
        if self.color:
            self.stream.write(RESET)
        if not self._at_line_start:
            self._write("\n")

    def _write(self, text: str, prefix: str = "") -> None:
        if not text:
            return
        if self.wrap:
            self._write_wrapped(text, prefix)
            return
        if prefix:
            pieces = []
            for part in _LINES.findall(text):
                if self._at_line_start:
                    pieces.append(prefix)
                pieces.append(part)
                self._at_line_start = part.endswith("\n")
            self.stream.write("".join(pieces))
            return
        self.stream.write(text)
        self._at_line_start = text.endswith("\n")

    def _write_wrapped(self, text: str, prefix: str) -> None:
        """Write ``text`` breaking lines between words at the terminal's width."""
        import shutil

        from dsh_cli.core.sanitize import display_width

        width = shutil.get_terminal_size((0, 0)).columns
        out: list[str] = []
        for token in _TOKENS.findall(text):
            if token == "\n":
                out.append("\n")
                self._column, self._space, self._at_line_start = 0, "", True
                continue
            if token.isspace():
                self._space += token
                continue
            if self._at_line_start and prefix:
                out.append(prefix)
                self._column = display_width(prefix)
            cells = len(token) if token.isascii() else display_width(token)
            room = width - self._column - len(self._space)
            if width and not self._at_line_start and self._column and cells > room:
                out.append("\n" + prefix)
                self._column, self._space = display_width(prefix) if prefix else 0, ""
            out.append(self._space + token)
            self._column += len(self._space) + cells
            self._space, self._at_line_start = "", False
        self.stream.write("".join(out))
