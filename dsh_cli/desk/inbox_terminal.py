"""The inbox on a terminal: a live list to pick from, and the pending count in the title.

``TerminalInbox`` is an inline prompt-toolkit application (``full_screen=False``, like
``choice_input.py``) showing the inbox (``desk/inbox.py``): a header with the count, one
row per entry (arrival order; rows another desk has open are dim and say so), the key
help. ``↑↓`` (``k``/``j``, page keys, home/end) move, ``enter`` opens the entry under the
cursor, ``x`` dismisses it, ``ctrl-d`` (or ``ctrl-c``) closes the desk. The list follows
the inbox as entries come and go; the cursor stays on its entry, or on the next one when
its entry leaves. Only the visible rows are drawn and a key moves an index, so a key costs
the same with 500 entries as with a screenful; a row's text is made again only when it
changes (its age, its taken mark, the cursor) and each row is one cell on prompt-toolkit's
screen (``line_window.py``). A key that moves the cursor remakes the two rows it moved
between and the renderer writes those two (``LineRenderer``), so it costs the same with
1,000 entries, a screenful or two, and a key over one entry little less (``python -m
bench --only inbox hub``).

While the list is shown the terminal reports focus (``CSI ? 1004 h``), so a notification
comes at once when the desk is not looked at (``desk/notify.py``); the reports are keys
to prompt-toolkit, bound here and handed to ``Focus``.

``TitleCount`` keeps ``dsh attach · N pending`` in the terminal's title (OSC 2) while the
desk runs, the old title saved on the terminal's title stack (``CSI 22 ; 2 t``) and
restored at the end (``CSI 23 ; 2 t``). The title holds only dsh's own words and a number:
no server's text ever reaches it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from dsh_cli.desk.desk import IDLE, Pick
from dsh_cli.desk.inbox import Entry, Inbox, InboxChange, age_until
from dsh_cli.desk.notify import FOCUS_OFF, FOCUS_ON, Focus
from dsh_cli.providers.terminal.text import fit  # here, not per key: an import costs 1.5 µs

__all__ = ["KEY_HELP", "TerminalInbox", "TitleCount", "title_text"]

KEY_HELP = "↑↓ move · enter open · x dismiss · ctrl-d close desk"
MAX_ROWS = 15  # entries shown at once; the rest scroll
TITLE_PUSH, TITLE_POP = "\x1b[22;2t", "\x1b[23;2t"  # xterm's title stack (window title)


def title_text(inbox: Inbox) -> str:
    """The terminal title for the inbox: dsh's words and the count only."""
    pending = len(inbox)
    return f"dsh attach · {pending} pending" if pending else "dsh attach · nothing pending"


class TitleCount:
    """The pending count in the terminal title, live; ``close`` gives the old title back."""

    def __init__(self, inbox: Inbox, write: Callable[[str], None]) -> None:
        self._inbox = inbox
        self._write = write
        self._shown: str | None = None
        self._write(TITLE_PUSH)
        self._unsubscribe = inbox.subscribe(lambda change: self.update())
        self.update()

    def update(self) -> None:
        text = title_text(self._inbox)
        if text != self._shown:
            self._shown = text
            self._write(f"\x1b]2;{text}\x07")

    def close(self) -> None:
        self._unsubscribe()
        self._write(TITLE_POP)


def _shown_rows(size: Any) -> int:
    """How many entries a terminal of ``size`` shows at once (header and help aside)."""
    return max(1, min(MAX_ROWS, size.rows - 4)) if size is not None else MAX_ROWS


class _Row(NamedTuple):
    """An entry's row as drawn, and what it was drawn for: valid while they hold."""

    taken: bool
    taken_by: str | None  # a hub names the holder: "taken by alice", then "by bob"
    width: int
    since: float  # the inbox clock when it was made
    until: float  # when its age next reads differently
    line: tuple[str, str]

    def shows(self, entry: Entry, width: int, now: float) -> bool:
        return (entry.taken == self.taken and entry.taken_by == self.taken_by
                and width == self.width and self.since <= now < self.until)


@dataclass(slots=True)
class _Frame:
    """The lines last drawn and what they were drawn for: a key that only moves the cursor
    within them remakes two."""

    entries: list[Entry]  # the inbox's snapshot drawn (a new list after any change)
    width: int
    rows: int
    top: int  # the first row shown
    index: int  # the cursor
    since: float  # the inbox clock when the rows were looked up
    until: float  # when the first of them reads differently (an age)
    lines: list[tuple[str, str]]

    def holds(self, entries: list[Entry], width: int, rows: int, top: int, now: float) -> bool:
        return (entries is self.entries and width == self.width and rows == self.rows
                and top == self.top and self.since <= now < self.until)


class TerminalInbox:
    """A ``Picker`` drawn with prompt-toolkit on ``input``/``output``."""

    def __init__(self, *, input: Any = None, output: Any = None,
                 focus: Focus | None = None) -> None:
        self.input = input
        self.output = output
        self.focus = focus
        self.app: Any = None  # the list on screen, for tests and the bench
        self._inbox: Inbox | None = None
        self._index = 0
        self._selected: Entry | None = None
        self._top = 0  # the first row shown
        self._made: dict[tuple[Entry, bool], _Row] = {}  # (entry, cursor on it): its row
        self._before: dict[tuple[Entry, bool], _Row] = {}
        self._texts: dict[tuple[str, int], str] = {}
        self._frame: _Frame | None = None

    # --- the cursor: an index into the inbox's snapshot, kept on its entry ---

    def _on_change(self, change: InboxChange) -> None:
        inbox = self._inbox
        if inbox is None:
            return
        entries = inbox.entries()
        if self._selected is not None and self._selected.key in inbox:
            self._index = entries.index(self._selected)  # once per change, not per key
        else:
            self._index = min(self._index, max(len(entries) - 1, 0))
            self._selected = entries[self._index] if entries else None
        if self.app is not None:
            self.app.invalidate()

    def move(self, step: int) -> None:
        """Move the cursor ``step`` rows (clamped); O(1) whatever the list's length."""
        if self._inbox is None:
            return
        entries = self._inbox.entries()
        if not entries:
            return
        self._index = max(0, min(len(entries) - 1, self._index + step))
        self._selected = entries[self._index]

    # --- drawing ---

    def _rows(self) -> int:
        return _shown_rows(self.app.output.get_size() if self.app is not None else None)

    def _lines(self) -> list[tuple[str, str]]:
        size = self.app.output.get_size() if self.app is not None else None
        return self.lines(size.columns if size is not None else 80, _shown_rows(size))

    def _fragments(self) -> list[tuple[str, str]]:
        size = self.app.output.get_size() if self.app is not None else None
        return self.frame(size.columns if size is not None else 80, self._rows())

    def frame(self, columns: int, rows: int) -> list[tuple[str, str]]:
        """The list as drawn on ``columns`` × (``rows`` entries + header and key help)."""
        out: list[tuple[str, str]] = []
        for line in self.lines(columns, rows):
            out += [line, ("", "\n")]
        return out[:-1]

    def lines(self, columns: int, rows: int) -> list[tuple[str, str]]:
        """``frame``'s lines, (style, text) each. A key that only moves the cursor within
        the shown rows remakes two lines (where it was, where it is): the rest of the last
        frame holds while the list, the width and the first row shown stay and no row's
        age reads differently yet. Otherwise each shown row is looked up, and made again
        only when its age, its taken mark, the cursor on it or the width changed."""
        inbox = self._inbox
        assert inbox is not None
        width = max(20, columns - 1)
        if not len(inbox):
            self._frame = None
            return [("class:hint", fit(IDLE, width))]
        entries = inbox.entries()
        if self._index < self._top:
            self._top = self._index
        elif self._index >= self._top + rows:
            self._top = self._index - rows + 1
        self._top = max(0, min(self._top, max(len(entries) - rows, 0)))
        now = inbox.now()
        last = self._frame
        if last is not None and last.holds(entries, width, rows, self._top, now):
            return self._moved(last, entries, width, now)
        taken = f" · {inbox.taken} taken at another desk" if inbox.taken else ""
        hidden = len(entries) - rows
        more = f" · {hidden} more (↑↓ to scroll)" if hidden > 0 else ""
        header = self._fitted(f"inbox · {len(inbox)} pending{taken}", width)
        hint = self._fitted(" " + KEY_HELP + more, width)
        out: list[tuple[str, str]] = [("class:header", header)]
        # the rows of this frame and the last (a cursor moving back finds its row made):
        # bounded by the screen, not by the list
        self._before, self._made = self._made, {}
        until = float("inf")
        for position in range(self._top, min(self._top + rows, len(entries))):
            row = self._row(entries[position], position == self._index, width, now)
            until = min(until, row.until)
            out.append(row.line)
        out.append(("class:hint", hint))
        self._frame = _Frame(entries, width, rows, self._top, self._index, now, until, out)
        return out

    def _moved(self, last: _Frame, entries: list[Entry], width: int, now: float
               ) -> list[tuple[str, str]]:
        """The last frame with the rows where the cursor was and is made again."""
        if last.index == self._index:
            return last.lines
        out = list(last.lines)  # a new list: the window knows a frame changed by it
        top, end = last.top, min(last.top + last.rows, len(entries))
        for position in (last.index, self._index):
            if top <= position < end:
                row = self._row(entries[position], position == self._index, width, now)
                if row.until < last.until:
                    last.until = row.until
                out[1 + position - top] = row.line  # after the header
        last.index, last.lines = self._index, out
        return out

    def _row(self, entry: Entry, here: bool, width: int, now: float) -> _Row:
        """``entry``'s row, the one made for this or the last frame while it still holds."""
        key = (entry, here)
        row = self._made.get(key) or self._before.get(key)
        if row is None or not row.shows(entry, width, now):
            style = "class:cursor" if here else ("class:taken" if entry.taken else "")
            row = _Row(entry.taken, entry.taken_by, width, now,
                       entry.arrived + age_until(entry.age(now)),
                       (style, fit(("❯ " if here else "  ") + entry.line(now), width)))
        self._made[key] = row
        return row

    def _fitted(self, text: str, width: int) -> str:
        """``fit`` for the header and the key help, remembered while they stay the same."""
        key = (text, width)
        if key not in self._texts:
            if len(self._texts) > 8:  # the header and the help of the last frames only
                self._texts.clear()
            self._texts[key] = fit(text, width)
        return self._texts[key]

    def follow(self, inbox: Inbox) -> None:
        """Follow ``inbox`` from now on (``pick`` does it; a caller drawing ``frame`` too)."""
        if self._inbox is not inbox:
            self._inbox = inbox
            inbox.subscribe(self._on_change)
        entries = inbox.entries()
        if self._selected is None or self._selected.key not in inbox:
            self._index = min(self._index, max(len(entries) - 1, 0))
            self._selected = entries[self._index] if entries else None

    # --- the application ---

    def _application(self, done: Callable[[Pick], None]) -> Any:
        from prompt_toolkit.application import Application
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.layout import Layout
        from prompt_toolkit.styles import Style

        from dsh_cli.desk.line_window import LineControl, LineWindow, draw_changed_lines

        bindings = KeyBindings()

        def on(*keys: str) -> Callable[[Callable[[], None]], Any]:
            def register(action: Callable[[], None]) -> Any:
                for key in keys:
                    bindings.add(*key.split(" "))(lambda event: action())
                return action
            return register

        on("up", "k")(lambda: self.move(-1))
        on("down", "j")(lambda: self.move(1))
        on("pageup")(lambda: self.move(-self._rows()))
        on("pagedown")(lambda: self.move(self._rows()))
        on("home")(lambda: self.move(-len(self._inbox or ())))
        on("end")(lambda: self.move(len(self._inbox or ())))
        def chosen(action: Literal["open", "dismiss"]) -> Callable[[], None]:
            def pick() -> None:
                if self._selected is not None:
                    done(Pick(action, self._selected))
            return pick

        on("enter")(chosen("open"))
        on("x", "delete")(chosen("dismiss"))
        on("c-d", "c-c")(lambda: done(Pick("close")))

        def focused(state: bool) -> Callable[[], None]:
            def learn() -> None:
                if self.focus is not None:
                    self.focus.focused = state
            return learn

        # focus reports (CSI I, CSI O) reach prompt-toolkit as escape, "[", a letter
        on("escape [ I")(focused(True))
        on("escape [ O")(focused(False))
        on("escape")(lambda: None)  # esc alone: nothing to go back from here
        app: Any = Application(
            layout=Layout(LineWindow(LineControl(self._lines), dont_extend_height=True)),
            key_bindings=bindings, full_screen=False, erase_when_done=True,
            input=self.input, output=self.output, refresh_interval=1.0,  # ages tick
            style=Style.from_dict({"header": "bold", "cursor": "reverse", "taken": "#888888",
                                   "hint": "#888888"}))
        app.ttimeoutlen = 0.1  # a lone esc is known at once; sequences come in one read
        draw_changed_lines(app)  # a key that moves the cursor writes two rows
        return app

    async def pick(self, inbox: Inbox) -> Pick:
        self.follow(inbox)
        chosen: list[Pick] = []

        def done(pick: Pick) -> None:
            chosen.append(pick)
            if self.app is not None and not self.app.future.done():
                self.app.exit()

        self.app = self._application(done)
        self._report_focus(FOCUS_ON)
        try:
            await self.app.run_async(handle_sigint=False)
        except EOFError:
            return Pick("close")
        finally:
            self._report_focus(FOCUS_OFF)
            if self.focus is not None:
                self.focus.focused = None  # not known again until the next report
            self.app = None
        return chosen[0] if chosen else Pick("close")

    def print_above(self, write: Callable[[], None]) -> None:
        """Run ``write`` (a line for the terminal) above the list: while the list is on
        screen it is erased first and drawn whole after, so no row is left half drawn."""
        app = self.app
        if app is None or not app.is_running:
            write()
            return
        from prompt_toolkit.application import run_in_terminal
        from prompt_toolkit.application.current import set_app

        with set_app(app):  # the notifier's task is not the list's: name the app
            run_in_terminal(write)

    def _report_focus(self, sequence: str) -> None:
        if self.focus is None or self.output is None:
            return
        with contextlib.suppress(OSError, ValueError):
            self.output.write_raw(sequence)
            self.output.flush()
