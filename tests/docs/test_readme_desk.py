"""The README's desk capture (under "Use dsh from your agent") is what ``dsh attach`` draws:
the inbox with two agents' entries, then the first one opened."""

from __future__ import annotations

import os
import re

from docs_reading import README

from dsh_cli.desk.desk import heading
from dsh_cli.desk.inbox import Inbox
from dsh_cli.desk.inbox_terminal import TerminalInbox
from dsh_cli.interaction import AskUserQuestionItem
from dsh_cli.providers.terminal.render import render
from dsh_cli.providers.terminal.state import BatchState

WIDTH, HEIGHT = 90, 24
EVENT = {"type": "question/requested", "rpc_id": "q_1",
         "questions": [{"id": "db", "header": "Database",
                        "question": "Which database should the service use?"},
                       {"id": "name", "question": "What should the service be called?"}],
         "source": {"client": "Claude Code", "cwd": "~/src/shop", "pid": 48213}}
OTHER = {"type": "permission/requested", "rpc_id": "p_1", "tool": "Bash",
         "arguments": {"command": "git push origin main"},
         "source": {"client": "Codex", "cwd": "~/src/api", "pid": 48377}}


def inbox_frame() -> list[str]:
    """The inbox list with both entries, the first under the cursor, 40 s and 12 s old."""
    now = [1000.0]
    inbox = Inbox(clock=lambda: now[0])
    inbox.add(object(), EVENT)
    now[0] += 28
    inbox.add(object(), OTHER)
    now[0] += 12
    picker = TerminalInbox()
    picker.follow(inbox)
    text = "".join(part for _style, part in picker.frame(WIDTH, 15))
    return [line.rstrip() for line in text.split("\n")]


def desk_frame() -> list[str]:
    """The inbox, then the batch from Claude Code opened: question 1 of 2, as drawn."""
    state = BatchState([
        AskUserQuestionItem(id="db", header="Database",
                            question="Which database should the service use?",
                            options=[{"label": "PostgreSQL (Recommended)",
                                      "description": "Managed, with point-in-time recovery"},
                                     {"label": "SQLite",
                                      "description": "One file, no server to run"}]),
        AskUserQuestionItem(id="name", question="What should the service be called?")])
    lines = render(state, WIDTH, HEIGHT, closes_desk=True)  # the desk teaches its ctrl-d
    drawn = ["".join(text for _, text in line).rstrip()
             for line in lines]
    return [*inbox_frame(), "", heading(EVENT), *drawn]


def readme_desk(text: str) -> tuple[int, int, list[str]]:
    """The code block after "The desk, while Claude Code asks:": (start, end, its lines)."""
    anchor = text.index("The desk, while Claude Code asks:")
    match = re.compile(r"```\n(.*?)```\n", re.S).search(text, anchor)
    assert match is not None
    return match.start(1), match.end(1), match.group(1).splitlines()


def test_the_readme_desk_capture_is_the_rendered_desk():
    text = README.read_text(encoding="utf-8")
    start, end, shown = readme_desk(text)
    frame = desk_frame()
    if os.environ.get("DSH_UPDATE_README") == "1":  # regenerate: DSH_UPDATE_README=1 pytest
        README.write_text(text[:start] + "\n".join(frame) + "\n" + text[end:], encoding="utf-8")
        shown = frame
    assert shown == frame, "run this test with DSH_UPDATE_README=1 to regenerate the block"
