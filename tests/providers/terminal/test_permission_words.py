"""The permission prompt explains itself at 100, 60 and 40 columns (pipe input, real gate).

What a newcomer needs on screen: who asks, what the tool does, the server's hints in words
as the server's claim, four choices in words that stay distinct, and an "always" that says
what it covers and how to undo it. The screen is read back through a terminal emulator.
"""

from __future__ import annotations

import asyncio
import io

import pyte
import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from dsh_cli.permissions import Hints, PermissionGate, PermissionRequest
from dsh_cli.providers.terminal.permission import TerminalPermissionPrompt

ROWS = 30


def notes_tool() -> PermissionRequest:
    return PermissionRequest(
        tool="mcp__notes__write_note", server="notes",
        arguments={"name": "plan", "text": "ship it"},
        hints=Hints(read_only=False, destructive=True, idempotent=True),
        description="Save a note in the notes folder, replacing one of the same name.")


def agents_call() -> PermissionRequest:
    return PermissionRequest(tool="Bash", arguments={"command": "ls"}, agent="Claude Code",
                             scope="input", cwd="/srv/shop")


def shown(stream: str, columns: int) -> list[str]:
    screen = pyte.Screen(columns, ROWS)
    pyte.Stream(screen).feed(stream)
    return [line.rstrip() for line in screen.display if line.strip()]


def drawn(request: PermissionRequest, columns: int, keys: str) -> tuple[list[str], list[str],
                                                                          object]:
    """The prompt as drawn, the screen after ``keys``, and the gate's outcome."""
    screen = io.StringIO()

    async def main():
        with create_pipe_input() as pipe:
            output = Vt100_Output(screen, lambda: Size(rows=ROWS, columns=columns),
                                  term="xterm")
            with create_app_session(input=pipe, output=output):
                prompt = TerminalPermissionPrompt(input=pipe, output=output)
                gate = PermissionGate()
                gate.register_provider(prompt)
                task = asyncio.ensure_future(gate.check(request, "digest"))
                for _ in range(300):
                    if prompt.state is not None:
                        break
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.2)
                before = screen.getvalue()
                pipe.send_text(keys)
                try:
                    outcome = await asyncio.wait_for(task, 5)
                except Exception as error:
                    outcome = error
                return before, screen.getvalue(), outcome

    before, after, outcome = asyncio.run(main())
    return shown(before, columns), shown(after, columns), outcome


def choice_lines(lines: list[str]) -> list[str]:
    return [line.lstrip(" ›") for line in lines if line.lstrip(" ›")[:2] in
            ("1 ", "2 ", "3 ", "4 ")]


@pytest.mark.parametrize("columns", [100, 60, 40])
def test_a_servers_tool_says_what_it_does_and_the_hints_in_words(columns):
    before, after, outcome = drawn(notes_tool(), columns, "3y")
    text = "\n".join(before)
    assert "notes wants to run" in text and "mcp__notes__write_note" in text
    assert "what it does: Save a note" in text
    assert "the server says:" in text and "may change or delete things" in text
    assert "safe to run twice" in text
    assert "idempotent" not in text and text.count("destructive") == 0
    choices = choice_lines(before)
    assert [line[:2] for line in choices] == ["1 ", "2 ", "3 ", "4 "]
    assert len({line[2:].split(" (")[0] for line in choices}) == 4  # distinct words
    assert choices[2].startswith("3 always (this tool")
    assert not any(line.endswith("…") for line in choices)
    assert all(len(line) <= columns for line in before)
    assert outcome.decision == "allow_always"
    summary = "\n".join(after)
    assert "allowed always" in summary and "this tool as defined now" in summary
    assert "dsh permissions rm" in summary


@pytest.mark.parametrize("columns", [100, 60, 40])
def test_an_agents_call_names_the_agent_and_always_covers_this_input_here(columns):
    before, after, outcome = drawn(agents_call(), columns, "3y")
    text = "\n".join(before)
    assert "Claude Code wants to run Bash" in text
    assert "dsh wants" not in text
    choices = choice_lines(before)
    assert choices[2].startswith("3 always (this input")
    assert len({line[2:].split(" (")[0] for line in choices}) == 4
    if columns >= 60:
        assert "until `dsh permissions rm`" in choices[2]
    summary = "\n".join(after)
    assert "allowed always" in summary and "this input in /srv/shop" in summary
    assert "dsh permissions rm" in summary
    assert outcome.decision == "allow_always"


def test_a_read_only_and_destructive_tool_is_shown_destructive():
    from dsh_cli.providers.terminal.permission import PermissionPromptState, permission_lines

    # (whether the gate asks at all is the rules' decision; this is what the prompt says)
    request = PermissionRequest(tool="mcp__x__wipe", server="x", arguments={},
                                hints=Hints(read_only=True, destructive=True))
    lines = permission_lines(request, PermissionPromptState(), 60)
    warned = ["".join(text for _, text in line) for line in lines
              if line[0][0] == "class:warning"]
    assert warned == ["   ⚠ the server says: may change or delete things"]
