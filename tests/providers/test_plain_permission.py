"""Permission requests in plain lines, read from a real pipe."""

from __future__ import annotations

import asyncio
import io
import os

import pytest

from dsh_cli.permissions import Hints, PermissionGate, PermissionRequest
from dsh_cli.providers.line_reader import LineReader
from dsh_cli.providers.plain_permission import PlainPermissionPrompt


def decide(text: str):
    read, write = os.pipe()
    os.write(write, text.encode())
    os.close(write)
    output = io.StringIO()

    async def main():
        lines = LineReader(read)
        prompt = PlainPermissionPrompt(lines, output, echo=True)
        gate = PermissionGate()
        gate.register_provider(prompt)
        try:
            return await gate.check(PermissionRequest(
                tool="mcp__git__git_reset", server="git", arguments={"repo_path": "/r\x1b[2J"},
                hints=Hints(destructive=True)), "d")
        except Exception as error:
            return error
        finally:
            # read to the end, so the reader thread is done with this descriptor before it
            # is closed: a thread still reading would steal the next test's pipe (same fd)
            while await lines.readline() is not None:
                pass
            lines.close()

    try:
        return asyncio.run(main()), output.getvalue()
    finally:
        os.close(read)


@pytest.mark.parametrize(("line", "decision"), [("1", "allow_once"), ("2", "allow_session"),
                                                 ("3", "allow_always")])
def test_a_number_decides(line, decision):
    outcome, shown = decide(line + "\n")
    assert outcome.decision == decision
    assert shown.startswith("[Permission] git wants to run mcp__git__git_reset\n")
    # the escape is shown, not sent to the terminal nor hidden
    assert '  repo_path: "/r\\u001b[2J"\n' in shown and "\x1b" not in shown
    assert "warning: the server says: may change or delete things" in shown
    assert "  3. always (this tool, until `dsh permissions rm`)\n" in shown
    if decision == "allow_always":
        assert "allowed always for this tool as defined now (undo: `dsh permissions rm`)" in shown


def test_four_with_a_reason_denies_with_it():
    outcome, _ = decide("4 wrong branch\n")
    assert outcome.code == "PERMISSION_DENIED" and outcome.message.endswith(": wrong branch")


def test_a_bad_line_gets_a_hint_and_is_asked_again():
    outcome, shown = decide("yes\n2\n")
    assert outcome.decision == "allow_session"
    assert "choose 1, 2, 3 or 4" in shown


def test_cancel_and_end_of_input():
    assert decide("/cancel\n")[0].code == "ASK_CANCELLED"
    assert decide("")[0].code == "ASK_ABORTED"
