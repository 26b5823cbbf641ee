"""The terminal inbox list through prompt-toolkit pipe input (no pty), and the title count."""

from __future__ import annotations

import asyncio

from dsh_cli.desk.inbox import Inbox
from dsh_cli.desk.inbox_terminal import TerminalInbox, TitleCount
from dsh_cli.desk.notify import Focus

DOWN = "\x1b[B"


def _event(rpc_id: str, text: str) -> dict:
    return {"type": "question/requested", "rpc_id": rpc_id, "session_id": "s",
            "questions": [{"id": "q", "question": text}],
            "source": {"client": "Codex", "cwd": "/w", "pid": 3}}


def _whole_frames(monkeypatch, mark=lambda is_done: is_done) -> list:
    """What ``mark`` makes of each frame prompt-toolkit's own renderer draws whole (the
    frames ``LineRenderer`` writes in part never reach it), in order."""
    from prompt_toolkit.renderer import Renderer

    whole: list = []
    render = Renderer.render

    def counted(renderer, app, layout, is_done=False):
        whole.append(mark(is_done))
        render(renderer, app, layout, is_done)

    monkeypatch.setattr(Renderer, "render", counted)
    return whole


async def _picked(inbox: Inbox, script, output=None) -> tuple:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    output = output or DummyOutput()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
        focus = Focus()
        picker = TerminalInbox(input=pipe, output=output, focus=focus)
        task = asyncio.ensure_future(picker.pick(inbox))
        while picker.app is None or not picker.app.is_running:
            await asyncio.sleep(0.01)
        await script(pipe, picker)
        pick = await asyncio.wait_for(task, 5)
        return pick, focus, picker


def test_the_cursor_stays_on_its_entry_as_others_come_and_go_and_x_dismisses():
    inbox = Inbox()
    link = object()
    for n in range(1, 4):
        inbox.add(link, _event(f"q{n}", f"question {n}"))

    async def script(pipe, picker):
        pipe.send_text(DOWN)  # on entry 2
        await asyncio.sleep(0.05)
        inbox.remove(link, "q1", "answered at the server")  # above the cursor
        inbox.add(link, _event("q4", "question 4"))  # below it
        inbox.mark(link, "q2", True)
        await asyncio.sleep(0.05)
        text = "".join(part for _style, part in picker._fragments())
        assert "inbox · 3 pending · 1 taken at another desk" in text
        assert "❯ 2. [question] 0s · taken at another desk · Codex" in text
        pipe.send_text("\x1b[O")  # a focus report is no key: nothing is picked
        await asyncio.sleep(0.2)
        assert picker.focus.focused is False  # the notifier now knows: notify at once
        pipe.send_text("x")

    pick, focus, _picker = asyncio.run(_picked(inbox, script))
    assert pick.action == "dismiss" and pick.entry.rpc_id == "q2"
    assert focus.focused is None  # known while the list was shown, forgotten after


def test_enter_opens_the_entry_under_the_cursor_and_the_cursor_moves_on_when_it_leaves():
    inbox = Inbox()
    link = object()
    for n in range(1, 4):
        inbox.add(link, _event(f"q{n}", f"question {n}"))

    async def script(pipe, picker):
        pipe.send_text(DOWN)
        await asyncio.sleep(0.05)
        inbox.remove(link, "q2", "answered at the server")  # the entry under the cursor
        await asyncio.sleep(0.05)
        pipe.send_text("\r")

    pick, _focus, _picker = asyncio.run(_picked(inbox, script))
    assert pick.action == "open" and pick.entry.rpc_id == "q3"


def test_the_title_holds_the_count_and_the_old_title_comes_back():
    inbox = Inbox()
    written: list[str] = []
    title = TitleCount(inbox, written.append)
    link = object()
    inbox.add(link, _event("q1", "\x1b]2;evil\x07 title"))
    inbox.add(link, _event("q2", "two"))
    inbox.remove(link, "q1", "answered")
    title.close()
    assert written == ["\x1b[22;2t", "\x1b]2;dsh attach · nothing pending\x07",
                       "\x1b]2;dsh attach · 1 pending\x07", "\x1b]2;dsh attach · 2 pending\x07",
                       "\x1b]2;dsh attach · 1 pending\x07", "\x1b[23;2t"]


def test_a_row_is_made_again_when_its_age_or_taken_mark_or_holder_or_the_cursor_changes():
    now = [1000.0]
    inbox = Inbox(clock=lambda: now[0])
    link = object()
    inbox.add(link, _event("q1", "one"))
    now[0] += 0.5
    inbox.add(link, _event("q2", "two"))
    picker = TerminalInbox()
    picker.follow(inbox)

    def rows() -> list[str]:
        return [text for _style, text in picker.lines(80, 15)[1:-1]]

    now[0] += 58.9  # 59.4 s and 58.9 s old
    assert rows() == ["❯ 1. [question] 59s · Codex · /w · pid 3 · one",
                      "  2. [question] 58s · Codex · /w · pid 3 · two"]
    now[0] += 0.7  # entry 1 turns a minute old (60.1 s), entry 2 does not (59.6 s)
    assert rows() == ["❯ 1. [question] 1m · Codex · /w · pid 3 · one",
                      "  2. [question] 59s · Codex · /w · pid 3 · two"]
    inbox.mark(link, "q2", True)
    picker.move(1)
    assert rows() == ["  1. [question] 1m · Codex · /w · pid 3 · one",
                      "❯ 2. [question] 59s · taken at another desk · Codex · /w · pid 3 · two"]
    picker.move(-1)  # back: the rows of the frame before, still true, are drawn again
    assert rows() == ["❯ 1. [question] 1m · Codex · /w · pid 3 · one",
                      "  2. [question] 59s · taken at another desk · Codex · /w · pid 3 · two"]
    inbox.mark(link, "q2", True, by="alice")  # a hub names who has it open
    assert rows()[1] == "  2. [question] 59s · taken by alice · Codex · /w · pid 3 · two"
    inbox.mark(link, "q2", True, by="bob")  # still taken, by another: the row says so
    assert rows()[1] == "  2. [question] 59s · taken by bob · Codex · /w · pid 3 · two"


def test_a_key_over_1000_entries_remakes_two_rows_and_draws_no_whole_frame(monkeypatch):
    import io

    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.output.vt100 import Vt100_Output

    from dsh_cli.desk import inbox_terminal

    inbox = Inbox()
    link = object()
    for n in range(1000):
        inbox.add(link, _event(f"q{n}", f"question {n}"))
    looked_up: list[bool] = []  # a shown row checked against its entry
    shows = inbox_terminal._Row.shows
    monkeypatch.setattr(inbox_terminal._Row, "shows",
                        lambda row, *args: looked_up.append(True) or shows(row, *args))
    whole = _whole_frames(monkeypatch)  # a frame prompt-toolkit's renderer drew whole

    async def script(pipe, picker):
        rendered = asyncio.Event()
        picker.app.after_render += lambda _app: rendered.set()
        while picker.app.render_counter == 0:  # the first frame, drawn whole
            await asyncio.sleep(0.01)
        looked_up.clear()
        whole.clear()
        for index in range(10):  # ↓ ↑ ↓ …: the cursor moves between the first two rows
            rendered.clear()
            pipe.send_text(DOWN if index % 2 == 0 else "\x1b[A")
            await asyncio.wait_for(rendered.wait(), 5)
        assert whole == []  # each key wrote the two rows that changed, nothing else
        assert len(looked_up) <= 2 * 10  # where the cursor was and is, of 15 shown
        text = "".join(part for _style, part in picker._fragments())
        assert "❯ 1. [question]" in text and "985 more" in text
        pipe.send_text("\x04")

    terminal = Vt100_Output(io.StringIO(), lambda: Size(rows=24, columns=100),
                            term="xterm-256color", enable_cpr=False)  # a VT100's rows only
    pick, _focus, _picker = asyncio.run(_picked(inbox, script, terminal))
    assert pick.action == "close"


def test_keys_over_1000_entries_leave_the_terminal_as_the_list_reads(monkeypatch):
    """Each frame a key draws by its changed rows (``LineRenderer``) leaves on a terminal
    (pyte) what the list reads: every row's text, the cursor's row alone reversed, nothing
    left of a longer row; scrolling, the ends, a taken mark, a removal and the ages ticking
    on the way. Only the removal is drawn whole."""
    import io

    import pyte
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    columns, rows = 100, 24
    now = [5000.0]
    inbox = Inbox(clock=lambda: now[0])
    link = object()
    for n in range(1000):  # rows of different lengths, so a shorter one must erase a tail
        inbox.add(link, _event(f"q{n}", "which database" + " and why" * (n % 7)))
    written = io.StringIO()
    terminal = pyte.Screen(columns, rows)
    stream = pyte.Stream(terminal)
    keys = [DOWN, DOWN, "\x1b[A", "\x1b[6~", DOWN, "\x1b[A", "\x1b[F", "\x1b[A", "\x1b[H",
            DOWN, "mark", DOWN, "\x1b[A", "remove", DOWN, "tick", "\x1b[A", DOWN]

    key_number = [-1]
    # the keys whose frame prompt-toolkit's renderer drew whole
    whole = _whole_frames(monkeypatch, lambda _done: key_number[0])

    def shown() -> list[tuple[str, bool]]:
        return [("".join(terminal.buffer[y][x].data for x in range(columns)).rstrip(),
                 all(terminal.buffer[y][x].reverse for x in range(10)))
                for y in range(rows)]

    async def run() -> None:
        with create_pipe_input() as pipe:
            output = Vt100_Output(written, lambda: Size(rows=rows, columns=columns),
                                  term="xterm-256color", enable_cpr=False)
            with create_app_session(input=pipe, output=output):
                picker = TerminalInbox(input=pipe, output=output)
                task = asyncio.ensure_future(picker.pick(inbox))
                while picker.app is None or picker.app.render_counter == 0:
                    await asyncio.sleep(0.01)
                rendered = asyncio.Event()
                picker.app.after_render += lambda _app: rendered.set()
                for number, key in enumerate(keys):
                    rendered.clear()
                    key_number[0] = number
                    if key == "mark":  # the row under the cursor turns "taken"
                        inbox.mark(link, picker._selected.rpc_id, True)
                    elif key == "remove":  # one above the cursor goes: the rows shift
                        inbox.remove(link, inbox.entries()[0].rpc_id, "answered")
                    elif key == "tick":  # every age reads a minute more
                        now[0] += 60
                        picker.app.invalidate()
                    else:
                        pipe.send_text(key)
                    await asyncio.wait_for(rendered.wait(), 5)
                    stream.feed(written.getvalue())
                    written.seek(0)
                    written.truncate()
                    expected = [(text.rstrip(), style == "class:cursor")
                                for style, text in picker._lines()]  # what was drawn
                    expected += [("", False)] * (rows - len(expected))
                    assert shown() == expected, f"after key {number} ({key!r})"
                pipe.send_text("\x04")
                await asyncio.wait_for(task, 5)

    asyncio.run(run())
    # drawn whole: the first frame, and the removal (the help line says one fewer); every
    # key wrote its changed rows, a page down too (its help line, made again, is unchanged)
    assert [number for number in whole if number >= 0] == [keys.index("remove")], whole


def test_on_an_output_that_is_no_vt100_every_frame_is_drawn_whole(monkeypatch):
    """``LineRenderer`` writes a frame's changed rows as VT100 bytes, so only to a VT100:
    on any other output (here prompt-toolkit's ``DummyOutput``) a key's frame is whole."""
    inbox = Inbox()
    link = object()
    for n in range(20):
        inbox.add(link, _event(f"q{n}", f"question {n}"))
    whole = _whole_frames(monkeypatch)

    async def script(pipe, picker):
        rendered = asyncio.Event()
        picker.app.after_render += lambda _app: rendered.set()
        while picker.app.render_counter == 0:
            await asyncio.sleep(0.01)
        whole.clear()
        for _ in range(3):
            rendered.clear()
            pipe.send_text(DOWN)
            await asyncio.wait_for(rendered.wait(), 5)
        assert len(whole) >= 3 and not any(whole)  # each key's frame (and no done one)
        pipe.send_text("\x04")

    pick, _focus, _picker = asyncio.run(_picked(inbox, script))  # a DummyOutput
    assert pick.action == "close"
