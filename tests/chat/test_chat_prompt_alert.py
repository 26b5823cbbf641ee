"""The prompts (history, plain lines) and the alert when a question appears."""

from __future__ import annotations

import asyncio
import io
import stat

from dsh_cli.chat.alert import BELL, OSC9, QuestionAlert
from dsh_cli.chat.prompt import PlainPrompt, TerminalPrompt, history_path
from dsh_cli.core.events import AssistantDelta, QuestionRequested
from dsh_cli.providers.line_reader import LineReader

REQUESTED = QuestionRequested("q_1", None, "c1", [{"id": "a", "question": "?"}])


def read_all(prompt, keys=None):
    async def main():
        lines = []
        while (line := await prompt.read()) is not None:
            lines.append(line)
        return lines

    return asyncio.run(main())


def test_history_lives_in_the_data_directory(dsh_home):
    assert history_path() == dsh_home / "history"


def test_the_prompt_keeps_history_in_a_private_file(tmp_path):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    path = tmp_path / "new-dir" / "history"
    with create_pipe_input() as pipe:
        pipe.send_text("first\rsecond\r\x04")
        lines = read_all(TerminalPrompt(history=path, input=pipe, output=DummyOutput()))
    assert lines == ["first", "second"]
    assert "+first" in path.read_text() and "+second" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_up_arrow_recalls_the_previous_session_history(tmp_path):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    path = tmp_path / "history"
    with create_pipe_input() as pipe:
        pipe.send_text("remember me\r\x04")
        read_all(TerminalPrompt(history=path, input=pipe, output=DummyOutput()))
    with create_pipe_input() as pipe:
        pipe.send_text("\x1b[A\r\x04")  # up, enter: a new process sees the old line
        lines = read_all(TerminalPrompt(history=path, input=pipe, output=DummyOutput()))
    assert lines == ["remember me"]


def test_the_plain_prompt_reads_lines_and_writes_its_prompt_to_output():
    output = io.StringIO()
    lines = read_all(PlainPrompt(LineReader(io.StringIO("hello\n\nbye\n")), output))
    assert lines == ["hello", "", "bye"]
    assert output.getvalue() == "> > > > \n"


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_the_bell_rings_once_per_question_batch_on_a_terminal():
    stream = Tty()
    alert = QuestionAlert(stream, "bell")
    alert(AssistantDelta("text"))
    alert(REQUESTED)
    assert stream.getvalue() == BELL


def test_osc9_is_a_desktop_notification():
    stream = Tty()
    QuestionAlert(stream, "osc9")(REQUESTED)
    assert stream.getvalue() == OSC9 == "\x1b]9;dsh: a question is waiting for you\x07"


def test_no_alert_with_none_or_without_a_terminal():
    quiet, pipe = Tty(), io.StringIO()
    QuestionAlert(quiet, "none")(REQUESTED)
    QuestionAlert(pipe, "bell")(REQUESTED)
    assert quiet.getvalue() == "" and pipe.getvalue() == ""


def test_the_plain_prompt_echoes_piped_lines_sanitised():
    output = io.StringIO()
    lines = read_all(PlainPrompt(LineReader(io.StringIO("hi\x1b[2J\n")), output, echo=True))
    assert lines == ["hi\x1b[2J"]  # the model gets what was typed; the screen gets it inert
    assert output.getvalue() == "> hi\n> \n"
