"""The answer-source table: each door's order, TERM=dumb, opening and disposal, lazy rows."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_cli.core.errors import ANSWERS_FILE_ERROR, NO_PROVIDER, HarnessError, WebError
from dsh_cli.core.events import ErrorEvent
from dsh_cli.interaction import (
    AskContext,
    AskUserQuestionRequest,
    ScriptedProvider,
    UserInteraction,
)
from dsh_cli.sources import (
    ASK,
    CHAT,
    DOORS,
    MCP,
    ROWS,
    RUN,
    WEB,
    AnswerOptions,
    answer_source,
    choose,
    prepare,
    surroundings,
)

PACKAGE = Path(__file__).resolve().parents[1] / "dsh_cli"
ANSWER = {"answers": [{"id": "q1", "selected": ["a"]}]}


class Tty(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def options(door, *, tty=True, term="xterm", **flags) -> AnswerOptions:
    """Options for ``door`` on terminals (``tty``) or pipes, with ``TERM=term``."""
    stream = Tty if tty else io.StringIO
    return AnswerOptions(door, stdin=stream(), stdout=stream(), stderr=stream(),
                         environ={"TERM": term}, **flags)


def request() -> AskUserQuestionRequest:
    return AskUserQuestionRequest.model_validate(
        {"questions": [{"id": "q1", "question": "Q?", "options": [{"label": "a"}]}]})


@pytest.fixture(autouse=True)
def no_controlling_tty(monkeypatch):
    """Whether /dev/tty opens depends on how pytest was started: say it does not."""
    monkeypatch.setattr(surroundings, "tty_available", lambda: False)


# -- each door's order --------------------------------------------------------------------

ALL = {"jsonl": True, "web": True, "answers": "a.json", "plain": True}


@pytest.mark.parametrize("door", [RUN, ASK])
@pytest.mark.parametrize(("flags", "row"), [
    (ALL, "jsonl"),
    ({**ALL, "jsonl": False}, "web"),
    ({"answers": "a.json", "plain": True}, "answers"),
    ({"plain": True}, "plain"),
    ({}, "terminal"),
])
def test_run_and_ask_take_the_first_source_that_applies_in_the_documented_order(
        door, flags, row):
    assert door.order == ("jsonl", "web", "answers", "plain", "terminal")
    assert choose(options(door, **flags)).name == row


def test_run_asks_on_the_terminal_of_stdin_and_stderr_unless_no_input():
    assert options(RUN).terminal == "stderr"
    assert choose(options(RUN, tty=False)).name == "none"
    assert choose(options(RUN, no_input=True)).name == "none"
    assert choose(options(RUN, no_input=True, plain=True)).name == "plain"
    piped_stdout = AnswerOptions(RUN, stdin=Tty(), stdout=io.StringIO(), stderr=Tty(),
                                 environ={})
    assert piped_stdout.terminal == "stderr"  # stdout is for the final answer


def test_ask_draws_on_stdout_else_on_dev_tty_else_nothing_can_answer(monkeypatch):
    assert options(ASK).terminal == "stdout"
    assert options(ASK, tty=False).terminal is None
    with pytest.raises(HarnessError) as raised:  # at once, before any UI
        prepare(options(ASK, tty=False))
    assert raised.value.code == NO_PROVIDER
    assert raised.value.message == "no terminal to ask on; use --answers, --plain or --jsonl"
    monkeypatch.setattr(surroundings, "tty_available", lambda: True)
    assert options(ASK, tty=False).terminal == "tty"
    assert options(ASK, stdin_busy=True).terminal == "tty"  # REQUEST - holds stdin
    assert choose(options(ASK, tty=False)).name == "terminal"


def test_chat_is_plain_when_asked_on_a_dumb_terminal_or_without_one_else_the_terminal():
    assert CHAT.order == ("plain", "terminal") and CHAT.otherwise == "plain"
    assert choose(options(CHAT)).name == "terminal"
    assert choose(options(CHAT, plain=True)).name == "plain"
    assert choose(options(CHAT, term="dumb")).name == "plain"
    assert choose(options(CHAT, tty=False)).name == "plain"
    assert choose(AnswerOptions(CHAT, stdin=Tty(), stdout=io.StringIO(), environ={})
                  ).name == "plain"


def test_web_always_answers_in_the_browser():
    assert choose(options(WEB, web=True)).name == "web"
    assert choose(options(WEB)).name == "web"


def test_dsh_mcp_takes_an_answers_file_then_the_browser_else_its_desks():
    assert MCP.order == ("answers", "web") and MCP.otherwise == "none"
    assert choose(options(MCP, answers="a.json", web=True)).name == "answers"
    assert choose(options(MCP, web=True)).name == "web"
    # "none" here: the desk hub of dsh mcp relays the questions; a terminal never draws
    assert choose(options(MCP)).name == "none"
    assert choose(options(MCP, plain=True, jsonl=True)).name == "none"


def test_every_door_names_only_rows_of_the_table():
    assert set(DOORS) == {"run", "ask", "chat", "web", "acp", "mcp"}
    assert set(ROWS) == {"jsonl", "web", "answers", "plain", "terminal", "none"}
    for door in DOORS.values():
        assert set(door.order) | {door.otherwise} <= set(ROWS), door.name


# -- TERM=dumb ------------------------------------------------------------------------------

@pytest.mark.parametrize("door", [RUN, ASK, CHAT])
def test_term_dumb_turns_the_terminal_ui_into_plain_lines_at_every_door(door):
    assert choose(options(door, term="xterm")).name == "terminal"
    assert choose(options(door, term="dumb")).name == "plain"


def test_term_dumb_without_a_terminal_changes_nothing():
    assert choose(options(RUN, tty=False, term="dumb")).name == "none"
    assert choose(options(RUN, term="dumb", no_input=True)).name == "none"
    assert choose(options(RUN, term="dumb", answers="a.json")).name == "answers"


def test_term_dumb_chooses_the_line_rendering_in_one_place():
    deciding = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                      if '== "dumb"' in path.read_text(encoding="utf-8"))
    # transcript.py's test is the other decision TERM=dumb makes: no colour
    assert deciding == ["sources/surroundings.py", "transcript.py"]


# -- preparing, opening, disposing ----------------------------------------------------------

def test_a_bad_answers_file_fails_when_prepared_before_any_ui_exists(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("[1, 2]")
    with pytest.raises(HarnessError) as raised:
        prepare(options(RUN, answers=str(path)))
    assert raised.value.code == ANSWERS_FILE_ERROR and str(path) in raised.value.message


def test_an_answers_file_answers_while_open_and_is_disposed_after(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"q1": ["a"]}))

    async def main():
        ui = UserInteraction()
        async with answer_source(ui, options(ASK, answers=str(path))) as source:
            assert source.name == "answers" and ui.provider is source.provider
            answer = await ui.ask(request())
        assert ui.provider is None
        return answer

    assert asyncio.run(main()).to_json() == ANSWER


def test_run_reports_answers_file_failures_on_stderr_and_ask_leaves_them_to_its_exit(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"other": "x"}))

    async def failure(door):
        chosen = options(door, answers=str(path))
        async with answer_source(UserInteraction(), chosen) as source:
            with pytest.raises(HarnessError):
                await source.provider.ask(AskContext(request(), "q_1"))
        return chosen.stderr.getvalue()

    assert asyncio.run(failure(RUN)).startswith("dsh: NO_PROVIDER: ")
    assert asyncio.run(failure(ASK)) == ""


def test_a_callers_provider_answers_under_the_chosen_rows_name_and_is_disposed_on_error():
    provider = ScriptedProvider([ANSWER])

    async def main():
        ui = UserInteraction()
        with pytest.raises(RuntimeError, match="boom"):
            async with answer_source(ui, options(CHAT, plain=True, provider=provider)) as source:
                assert source.name == "plain" and source.lines is None
                assert (await ui.ask(request())).to_json() == ANSWER
                raise RuntimeError("boom")
        assert ui.provider is None
        ui.register_provider(ScriptedProvider())  # the slot is free again

    asyncio.run(main())


def test_plain_reads_stdin_shares_its_reader_and_closes_it_on_the_way_out():
    chosen = options(RUN, tty=False, plain=True)
    chosen.stdin.write("1\n")
    chosen.stdin.seek(0)

    async def main():
        ui = UserInteraction()
        async with answer_source(ui, chosen) as source:
            assert source.lines is source.provider.lines
            answer = await ui.ask(request())
        assert ui.provider is None and source.lines.at_eof
        return answer

    assert asyncio.run(main()).to_json() == ANSWER
    assert "Q?" in chosen.stderr.getvalue()


def test_nothing_answers_at_the_none_row_so_a_question_fails_with_no_provider():
    async def main():
        ui = UserInteraction()
        async with answer_source(ui, options(RUN, tty=False)) as source:
            assert source.name == "none" and source.provider is None and ui.provider is None
            with pytest.raises(HarnessError) as raised:
                await ui.ask(request())
        return raised.value.code

    assert asyncio.run(main()) == NO_PROVIDER


def test_the_relay_is_started_registered_then_disposed_and_closed(tmp_path):
    frames = tmp_path / "frames"
    frames.write_text("")
    output = io.StringIO()

    async def main():
        ui = UserInteraction()
        with open(frames, encoding="utf-8") as stdin:
            chosen = AnswerOptions(ASK, jsonl=True, stdin=stdin, stdout=output, environ={})
            async with answer_source(ui, chosen) as source:
                assert source.relay is not None and ui.provider is source.relay.provider
                with pytest.raises(HarnessError) as raised:  # stdin is already at its end
                    await ui.ask(request())
            assert ui.provider is None
            ui.events.emit(ErrorEvent("LATE", "written after the source was closed"))
        return raised.value.code

    assert asyncio.run(main()) == "ASK_ABORTED"
    assert '"type":"question/requested"' in output.getvalue()
    assert "LATE" not in output.getvalue()


def _refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize("fail", [False, True])
def test_the_web_host_serves_while_open_and_is_closed_on_exit_and_on_error(fail):
    async def main():
        ui = UserInteraction()
        chosen = options(RUN, web=True, open_browser=False)
        try:
            async with answer_source(ui, chosen) as source:
                port = source.host.port
                assert ui.provider is source.provider and not _refused(port)
                if fail:
                    raise RuntimeError("boom")
        except RuntimeError:
            assert fail
        assert ui.provider is None
        assert f"dsh: open http://127.0.0.1:{port}/?token=" in chosen.stderr.getvalue()
        return port

    port = asyncio.run(main())
    assert _refused(port)


def test_a_web_host_that_cannot_bind_fails_on_opening_and_leaves_nothing_registered():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        async def main():
            ui = UserInteraction()
            with pytest.raises(WebError):
                async with answer_source(ui, options(WEB, port=port, open_browser=False)):
                    pass
            return ui.provider

        assert asyncio.run(main()) is None


def test_the_web_browser_opens_by_default_only_with_a_display(monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    assert surroundings.browser_available({"DISPLAY": ":0"})
    assert not surroundings.browser_available({})


# -- lazy rows --------------------------------------------------------------------------------

HEAVY = ("prompt_toolkit", "starlette", "uvicorn", "openai", "sqlite3")
OPEN_ROW = """
import asyncio, io, json, sys
import dsh_cli.sources.options
from dsh_cli.interaction import UserInteraction
from dsh_cli.sources import {door}, AnswerOptions, answer_source

if {tty}:  # stdio taken for terminals, so the terminal row applies
    dsh_cli.sources.options.is_terminal = lambda stream: True

async def main():
    stdin = open({stdin!r})
    chosen = AnswerOptions({door}, stdin=stdin, stdout=io.StringIO(), stderr=io.StringIO(),
                           environ={{"TERM": "xterm"}}, open_browser=False,
                           **json.loads({flags!r}))
    async with answer_source(UserInteraction(), chosen) as source:
        print(source.name)

asyncio.run(main())
print(json.dumps(sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))))
"""


@pytest.mark.parametrize(("door", "flags", "tty", "row", "loaded"), [
    ("ASK", {"answers": "ANSWERS"}, True, "answers", []),
    ("RUN", {"plain": True}, False, "plain", []),
    ("RUN", {"jsonl": True}, False, "jsonl", []),
    ("RUN", {}, False, "none", []),
    ("RUN", {"web": True}, False, "web", ["starlette", "uvicorn"]),
    # the question UI is loaded when the first batch comes, not when the source opens
    ("RUN", {}, True, "terminal", []),
    ("CHAT", {}, True, "terminal", []),
])
def test_a_row_imports_only_its_own_provider_when_it_is_chosen(tmp_path, door, flags, tty,
                                                               row, loaded):
    answers = tmp_path / "a.json"
    answers.write_text("{}")
    empty = tmp_path / "empty"
    empty.write_text("")
    flags = {key: str(answers) if value == "ANSWERS" else value for key, value in flags.items()}
    code = OPEN_ROW.format(door=door, tty=tty, stdin=str(empty), flags=json.dumps(flags),
                           heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    name, modules = done.stdout.splitlines()
    assert name == row
    assert json.loads(modules) == loaded
