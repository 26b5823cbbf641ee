"""Each row of the answer-source table brings its own permission provider, or none."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from dsh_cli.core.errors import NO_PERMISSION_PROVIDER, PermissionRequestError
from dsh_cli.core.events import EventStream
from dsh_cli.interaction import UserInteraction
from dsh_cli.permissions import Hints, PermissionGate, PermissionRequest
from dsh_cli.sources import ASK, CHAT, RUN, AnswerOptions, answer_source


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def options(door, *, tty=True, **flags) -> AnswerOptions:
    stream = Tty if tty else io.StringIO
    return AnswerOptions(door, stdin=stream(), stdout=stream(), stderr=stream(),
                         environ={"TERM": "xterm"}, **flags)


def request(tool="mcp__notes__write_note") -> PermissionRequest:
    return PermissionRequest(tool=tool, arguments={"text": "hi"}, server="notes",
                             hints=Hints(destructive=True))


def test_plain_asks_permission_on_the_same_line_reader_as_its_questions():
    chosen = options(RUN, tty=False, plain=True)
    chosen.stdin.write("4 not now\n")
    chosen.stdin.seek(0)

    async def main():
        gate = PermissionGate(events=EventStream())
        async with answer_source(UserInteraction(), chosen, gate) as source:
            assert source.permissions is gate.provider
            assert source.permissions.lines is source.lines
            with pytest.raises(PermissionRequestError) as raised:
                await gate.check(request(), "digest")
        assert gate.provider is None  # disposed with the source
        return raised.value

    error = asyncio.run(main())
    assert error.code == "PERMISSION_DENIED" and "not now" in error.message
    assert "[Permission] notes wants to run mcp__notes__write_note" in chosen.stderr.getvalue()
    assert "4 not now" in chosen.stderr.getvalue()  # piped answers are echoed


def test_the_terminal_row_offers_a_lazy_prompt_that_loads_nothing_until_asked():
    async def main():
        gate = PermissionGate()
        async with answer_source(UserInteraction(), options(CHAT), gate) as source:
            assert source.name == "terminal" and gate.provider is source.permissions
            assert source.permissions.terminal is source.provider
            assert source.permissions._prompt is None
        assert gate.provider is None

    asyncio.run(main())


@pytest.mark.parametrize("answers", [True, False])
def test_answers_and_none_have_no_permission_provider_so_a_call_fails_at_once(tmp_path,
                                                                              answers):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({}))
    chosen = options(RUN, tty=False, answers=str(path) if answers else None)

    async def main():
        gate = PermissionGate()
        async with answer_source(UserInteraction(), chosen, gate) as source:
            assert source.name == ("answers" if answers else "none")
            assert source.permissions is None and gate.provider is None
            with pytest.raises(PermissionRequestError) as raised:
                await asyncio.wait_for(gate.check(request(), "digest"), 5)
        return raised.value

    assert asyncio.run(main()).code == NO_PERMISSION_PROVIDER


def test_a_door_without_a_gate_registers_no_permission_provider(tmp_path):
    chosen = options(ASK, tty=False, plain=True)

    async def main():
        async with answer_source(UserInteraction(), chosen) as source:
            return source.permissions

    assert asyncio.run(main()) is not None  # offered, but nothing to register it on


@pytest.mark.parametrize("row", ["jsonl", "web"])
def test_a_controller_and_a_browser_decide_permission_requests_from_outside(row):
    from dsh_cli.permissions.pending import RemotePermissions

    read, write = __import__("os").pipe()
    chosen = AnswerOptions(RUN, jsonl=row == "jsonl", web=row == "web", open_browser=False,
                           stdin=__import__("os").fdopen(read, "rb"), stdout=io.StringIO(),
                           stderr=io.StringIO(), environ={"TERM": "xterm"})

    async def main():
        gate = PermissionGate(events=EventStream())
        async with answer_source(UserInteraction(), chosen, gate) as source:
            assert source.name == row
            assert isinstance(source.permissions, RemotePermissions)
            assert gate.provider is source.permissions
        assert gate.provider is None  # disposed on the way out

    try:
        asyncio.run(main())
    finally:
        __import__("os").close(write)
