"""The desk's notifications: which escape the terminal understands, and its bytes.

Pure functions choose the protocol from the environment (``protocol``), make the text
(``notification``: sanitised, one line, bounded); ``core.terminal_alert`` encodes it
(``encode``, wrapped for tmux by ``tmux_wrap``). ``DeskNotifier`` decides when (the
terminal lost focus, or the batch still waits after ``notify_delay``) and runs ``notify_command``
(``run_notify_command``: argv, no shell, a timeout, bounded output, one line on failure).

Which terminal speaks which (docs/internals.md "Desk notifications" has the sources):
kitty OSC 99; Ghostty, WezTerm, foot, rxvt-unicode and VTE OSC 777 (title and body);
iTerm2, Warp and VS Code OSC 9; anything else the bell.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from dsh_cli.core.json_lines import json_line
from dsh_cli.core.limits import (
    NOTIFICATION_CHARACTERS,
    NOTIFY_COMMAND_SECONDS,
    NOTIFY_OUTPUT_BYTES,
)
from dsh_cli.core.lines import notice
from dsh_cli.core.sanitize import one_line
from dsh_cli.core.terminal_alert import encode, tmux_wrap
from dsh_cli.desk.protocol import asks_permission
from dsh_cli.desk.summary import first_question

__all__ = ["FOCUS_OFF", "FOCUS_ON", "DeskNotifier", "Focus", "encode", "grouped", "notification",
           "protocol", "run_notify_command", "summary", "tmux_wrap"]

FOCUS_ON = "\x1b[?1004h"  # the terminal then sends CSI I (focus in) and CSI O (focus out)
FOCUS_OFF = "\x1b[?1004l"

_OSC777 = ("ghostty", "wezterm", "foot", "rxvt-unicode")
_OSC9 = ("iterm.app", "warpterminal", "vscode")


def protocol(env: Mapping[str, str]) -> str:
    """``osc99``, ``osc777``, ``osc9`` or ``bell``: what the desk's terminal shows."""
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    if env.get("KITTY_WINDOW_ID") or term == "xterm-kitty":
        return "osc99"
    # inside tmux TERM_PROGRAM names tmux; the outer terminal's own variables still tell
    if env.get("WEZTERM_PANE") or env.get("GHOSTTY_RESOURCES_DIR") or program in _OSC777 \
            or term.startswith(_OSC777) or term == "xterm-ghostty" or env.get("VTE_VERSION"):
        return "osc777"
    if env.get("ITERM_SESSION_ID") or program in _OSC9:
        return "osc9"
    return "bell"


def _cut(text: str, limit: int = NOTIFICATION_CHARACTERS) -> str:
    """One safe line of at most ``limit`` characters (a notification's by default)."""
    return one_line(text, limit)


def notification(event: Mapping[str, Any]) -> tuple[str, str]:
    """The title (who asks) and body (header and first question) of a batch, each safe."""
    given = event.get("source")
    source: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    client = str(source.get("client") or "an MCP client")
    if asks_permission(event):
        return _cut(notice(f"{client} asks permission")), _cut(str(event.get("tool") or "?"))
    return _cut(notice(f"{client} asks")), first_question(event, NOTIFICATION_CHARACTERS)


def summary(event: Mapping[str, Any]) -> dict[str, Any]:
    """The batch as ``notify_command`` reads it on stdin: who asks, what, the text shown."""
    given = event.get("source")
    source: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    title, body = notification(event)
    questions = event.get("questions")
    kind = "permission" if asks_permission(event) else "question"
    return {"kind": kind, "rpc_id": _cut(str(event.get("rpc_id") or "")),
            "agent": _cut(str(source.get("client") or "")),
            "cwd": _cut(str(source.get("cwd") or ""), 1000),
            "pid": source.get("pid") if isinstance(source.get("pid"), int) else None,
            "questions": len(questions) if isinstance(questions, list) else 0,
            "title": title, "body": body}


async def run_notify_command(argv: list[str], data: dict[str, Any], *,
                             timeout: float = NOTIFY_COMMAND_SECONDS,
                             limit: int = NOTIFY_OUTPUT_BYTES) -> str | None:
    """Run ``argv`` (no shell) with ``data`` as JSON on stdin; None when it succeeded, else
    the one line that says what went wrong."""
    name = one_line(argv[0], 80)
    try:
        child = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    except OSError as error:
        return notice(f"notify_command {name}: cannot run it: {error.strerror or error}")
    kept = bytearray()
    flooded = False

    async def drain() -> None:
        nonlocal flooded
        assert child.stdout is not None
        while chunk := await child.stdout.read(65536):
            room = limit - len(kept)
            kept.extend(chunk[:max(room, 0)])
            flooded = flooded or len(chunk) > room  # the rest is read and dropped

    async def talk() -> int:
        assert child.stdin is not None
        with contextlib.suppress(OSError):  # a command that ignores stdin may close it
            child.stdin.write(json_line(data, ascii_only=True).encode("ascii"))
            await child.stdin.drain()
            child.stdin.close()
        await drain()
        return await child.wait()

    try:
        status = await asyncio.wait_for(talk(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, 9)  # its whole group: a shell script's children too
        await child.wait()
        return notice(f"notify_command {name} did not finish within {timeout:g} s; killed")
    finally:
        if child.returncode is None:  # cancelled (the desk closes): leave no child behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, 9)
    said = _cut(kept.decode("utf-8", "replace"))
    if status != 0:
        return notice(f"notify_command {name} exited {status}" + (f": {said}" if said else ""))
    if flooded:
        return notice(f"notify_command {name} wrote more than {limit} bytes; the rest was dropped")
    return None


@dataclass
class Focus:
    """Whether the desk's terminal has focus: True, False, or None (not known)."""

    focused: bool | None = None

    def feed(self, data: bytes) -> bytes:
        """Take focus reports (CSI I, CSI O) out of input; the last one wins."""
        for report, state in ((b"\x1b[I", True), (b"\x1b[O", False)):
            if report in data:
                position = data.rfind(report)
                other = b"\x1b[O" if state else b"\x1b[I"
                if position > data.rfind(other):
                    self.focused = state
        return data.replace(b"\x1b[I", b"").replace(b"\x1b[O", b"")


def grouped(event: Mapping[str, Any], more: int) -> tuple[str, str]:
    """``notification`` of the first of ``more + 1`` batches: its body says how many more."""
    title, body = notification(event)
    if not more:
        return title, body
    tail = f" · +{more} more waiting"
    return title, one_line(body, NOTIFICATION_CHARACTERS - len(tail)) + tail


@dataclass(eq=False)
class DeskNotifier:
    """When a batch arrives: notify now if the terminal is not focused, else after
    ``delay`` seconds if it still waits.

    Notifications are coalesced: one is shown (and ``notify_command`` run) at a time; the
    batches that become due while it runs are summed up in the next one (the first of them,
    ``+N more waiting``), so 300 batches at once start one or two commands, not 300."""

    write: Callable[[str], None]  # the escape to the terminal
    say: Callable[[str], None]  # one line about a failed notify_command
    kind: str  # a ``protocol`` result, or ``none``
    tmux: bool = False
    command: list[str] | None = None
    delay: float | None = None
    focus: Focus = field(default_factory=Focus)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    # due and not yet notified: each batch's event and whether it still waits (bounded by
    # the inbox, whose entries these are)
    _due: list[tuple[Mapping[str, Any], Callable[[], bool]]] = field(default_factory=list)
    _notifying: asyncio.Task[None] | None = None

    def arrived(self, event: Mapping[str, Any], waiting: Callable[[], bool]) -> None:
        """The desk's hook: a batch arrived; ``waiting`` tells whether it still does."""
        if self.kind == "none" and not self.command:
            return
        if self.focus.focused is False:
            self._queue(event, waiting)
        elif self.delay is not None:
            self._start(self._later(event, waiting))

    def _start(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _later(self, event: Mapping[str, Any], waiting: Callable[[], bool]) -> None:
        assert self.delay is not None
        await asyncio.sleep(self.delay)
        if waiting():
            self._queue(event, waiting)

    def _queue(self, event: Mapping[str, Any], waiting: Callable[[], bool]) -> None:
        self._due.append((event, waiting))
        if self._notifying is None or self._notifying.done():
            self._notifying = self._start(self._drain())

    async def _drain(self) -> None:
        """One notification at a time, each for every batch due and still waiting."""
        while self._due:
            due = [event for event, waiting in self._due if waiting()]
            self._due.clear()
            if due:
                await self._notify(due[0], len(due) - 1)

    async def _notify(self, event: Mapping[str, Any], more: int = 0) -> None:
        title, body = grouped(event, more)
        if self.kind != "none":
            self.write(encode(self.kind, title, body, tmux=self.tmux and self.kind != "bell"))
        if self.command:
            data = {**summary(event), "title": title, "body": body, "more": more}
            line = await run_notify_command(self.command, data)
            if line:
                self.say(line)

    async def close(self) -> None:
        """Cancel what is pending (a delay, a running command: its child is killed)."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
