"""dsh's own long lines wrap at spaces on a narrow terminal, never inside a word.

Each command runs in a pseudo-terminal 60 columns wide; what it drew is replayed on a
``pyte`` screen of that size, and every word of the long line must sit whole on one row (a
terminal that wraps a line itself cuts whatever word meets the edge).
"""

from __future__ import annotations

import json
import os
import re

import pytest
from harness.dsh_under_test import DSH

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

pytestmark = pytest.mark.pty
COLUMNS, ROWS = 60, 40


class Terminal:
    """A dsh child in a pty, its output kept on a pyte screen."""

    def __init__(self, args: list[str], cwd: str | None = None) -> None:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("DSH_MODEL", "DSH_API", "DEEPSEEK_", "OPENAI_"))}
        env.update(TERM="xterm", NO_COLOR="1")
        self.child = pexpect.spawn(DSH, args, cwd=cwd, env=env, encoding="utf-8",
                                   dimensions=(ROWS, COLUMNS), timeout=60)
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.Stream(self.screen)

    def wait(self, pattern: str) -> None:
        self.child.expect(pattern)
        self.stream.feed(self.child.before + self.child.after)

    def rows(self) -> list[str]:
        return [row.rstrip() for row in self.screen.display]

    def close(self) -> None:
        self.child.close(force=True)


def words_whole(text: str, rows: list[str]) -> None:
    for word in text.split():
        if len(word) < COLUMNS:
            assert any(word in row for row in rows), (word, "\n".join(rows))


def test_the_first_run_notice_and_help_wrap_at_spaces(tmp_path):
    from dsh_cli.chat.app import DEMO_NOTICE
    from dsh_cli.chat.commands import KEYS

    assert len(DEMO_NOTICE) > COLUMNS
    chat = Terminal([], cwd=str(tmp_path))
    try:
        chat.wait(r"--base-url you give")
        words_whole(DEMO_NOTICE, chat.rows())
        chat.wait("›")  # the prompt
        chat.child.send("/help\r")
        chat.wait(r"ctrl-d\s+exit")
        rows = chat.rows()
        words_whole(KEYS, rows)
        assert any(row.startswith("/resume") for row in rows), rows
        chat.child.send("\x04")
        chat.child.expect(pexpect.EOF)
    finally:
        chat.close()


def test_the_dsh_mcp_banner_wraps_at_spaces(tmp_path):
    server = Terminal(["mcp"], cwd=str(tmp_path))
    try:
        server.wait(r"quit")
        rows = server.rows()
        words_whole("mcp waits for an agent on stdin (an agent starts `dsh mcp` as its MCP "
                    "server); answer its questions with `dsh attach` in another terminal; "
                    "ctrl-c to quit", rows)
        server.child.send("\x03")
        server.child.expect(pexpect.EOF)
    finally:
        server.close()


def test_the_mcp_list_trust_warning_wraps_at_spaces(tmp_path):
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "here": {"command": "true"}}}))
    listing = Terminal(["mcp", "list"], cwd=str(tmp_path))
    try:
        listing.child.expect(pexpect.EOF)
        listing.stream.feed(listing.child.before)
        rows = listing.rows()
        text = " ".join(" ".join(rows).split())
        said = re.search(r"dsh: .*?is not trusted.*?elsewhere, nor what that code opens or "
                         r"fetches as it runs\)", text)
        assert said, rows
        words_whole(said.group(0), rows)
    finally:
        listing.close()
