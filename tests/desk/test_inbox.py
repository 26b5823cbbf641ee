"""The inbox model: entries in arrival order, numbers never reused, each change heard once."""

from __future__ import annotations

from dsh_cli.desk.inbox import Inbox, age_text, age_until


def _question(rpc_id: str, text: str = "Which database?", **more):
    return {"type": "question/requested", "rpc_id": rpc_id, "session_id": "s",
            "questions": [{"id": "db", "header": "DB", "question": text}],
            "source": {"client": "Claude Code", "cwd": "/srv/app", "pid": 41}, **more}


def test_entries_keep_arrival_order_and_numbers_are_never_reused():
    now = [100.0]
    inbox = Inbox(clock=lambda: now[0])
    heard = []
    inbox.subscribe(lambda change: heard.append((change.kind, change.entry.number)))
    a, b = object(), object()
    first = inbox.add(a, _question("q1"))
    inbox.add(b, _question("q1"))  # the same rpc_id at another server: another entry
    assert inbox.add(a, _question("q1")) is None  # a replay of a known one
    inbox.remove(a, "q1", "answered")
    third = inbox.add(a, _question("q2"))
    assert first is not None and third is not None
    assert [entry.number for entry in inbox.entries()] == [2, 3]
    assert inbox.numbered(1) is None and inbox.numbered(3) is third
    assert heard == [("added", 1), ("added", 2), ("removed", 1), ("added", 3)]
    now[0] = 165.0
    assert third.line(inbox.now()) == \
        "3. [question] 1m · Claude Code · /srv/app · pid 41 · DB: Which database?"


def test_taken_and_free_are_heard_once_and_a_gone_server_takes_its_entries():
    inbox = Inbox()
    heard = []
    inbox.subscribe(lambda change: heard.append((change.kind, change.entry.rpc_id)))
    a, b = object(), object()
    inbox.add(a, _question("q1"))
    inbox.add(b, _question("q2"))
    assert inbox.mark(a, "q1", True) is not None
    assert inbox.mark(a, "q1", True) is None  # no change, nothing heard
    assert inbox.mark(a, "nope", True) is None
    assert inbox.free == 1
    inbox.mark(a, "q1", False)
    inbox.remove_link(a, "its dsh mcp went away")
    assert [entry.rpc_id for entry in inbox.entries()] == ["q2"]
    assert heard == [("added", "q1"), ("added", "q2"), ("taken", "q1"), ("free", "q1"),
                     ("removed", "q1")]


def test_kinds_and_what_is_shown_is_safe_and_bounded():
    inbox = Inbox()
    link = object()
    permission = inbox.add(link, {"type": "permission/requested", "rpc_id": "p1",
                                  "tool": "Bash", "arguments": {"command": "rm -rf /\x1b[2J"},
                                  "source": {"client": "Codex\x07", "cwd": "/x", "pid": 7}})
    form = inbox.add(link, _question("f1", declinable=True,
                                     source={"client": "Claude Code", "cwd": "/x", "pid": 7,
                                             "server": "git"}))
    long = inbox.add(link, _question("q1", "x" * 100_000, delivery="async"))
    assert permission is not None and form is not None and long is not None
    assert permission.kind == "permission" and "\x1b" not in permission.what
    assert "\x07" not in permission.who.agent
    assert form.kind == "form" and form.who.line().startswith("Claude Code via git")
    assert len(long.what) <= 160 and long.what.endswith("…")
    assert long.to_json(inbox.now())["delivery"] == "async"
    assert [age_text(s) for s in (0, 59, 60, 7200, 90000)] == ["0s", "59s", "1m", "2h", "1d"]
    # when each reads differently next: what the terminal list redraws a row for
    assert [age_until(s) for s in (0, 59.5, 60, 119, 7200, 90000)] == [1, 60, 120, 120, 10800,
                                                                      172800]
