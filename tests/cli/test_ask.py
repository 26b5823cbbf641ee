"""`dsh ask` in-process: request sources, answer sources, output formats, exit statuses."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from dsh_cli.cli import main
from dsh_cli.interaction import ScriptedProvider
from dsh_cli.sources import options as options_module
from dsh_cli.sources import surroundings

BATCH = {"questions": [
    {"id": "db", "question": "Which database?", "options": [
        {"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]},
    {"id": "name", "question": "Project name?"},
]}


def dsh_ask(*args: str, input: str | None = None):
    return CliRunner().invoke(main, ["ask", *args], input=input)


def write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def failed(result, status: int, line: str) -> None:
    """Exit ``status``, nothing on stdout, exactly one stderr line starting with ``line``."""
    assert result.exit_code == status, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(line), result.stderr


def test_request_file_answered_from_an_answers_file(tmp_path):
    request = write(tmp_path, "q.json", BATCH)
    answers = write(tmp_path, "a.json", {"db": ["PostgreSQL (Recommended)"], "name": "acme"})
    result = dsh_ask(request, "--answers", answers)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ('{"answers":[{"id":"db","selected":["PostgreSQL (Recommended)"]},'
                             '{"id":"name","selected":[],"custom":"acme"}]}\n')


def test_request_from_stdin_and_flags(tmp_path):
    answers = write(tmp_path, "a.json", {"db": None, "name": "x", "q1": ["b", "a"],
                                         "pick": ["a"]})
    result = dsh_ask("-", "--answers", answers, input=json.dumps(BATCH))
    assert json.loads(result.stdout)["answers"][0] == {"id": "db", "selected": []}
    result = dsh_ask("-q", "Which?", "-o", "a", "-o", "b", "--multi", "--answers", answers)
    assert json.loads(result.stdout) == {"answers": [{"id": "q1", "selected": ["a", "b"]}]}
    result = dsh_ask("-q", "Which?", "-o", "a", "--id", "pick", "--header", "H", "--detail",
                     "more", "--answers", answers)
    assert json.loads(result.stdout) == {"answers": [{"id": "pick", "selected": ["a"]}]}


def test_format_lines(tmp_path):
    answers = write(tmp_path, "a.json", {"q1": ["a", "c"]})
    result = dsh_ask("-q", "Q?", "-o", "a", "-o", "b", "-o", "c", "--multi", "--format", "lines",
                     "--answers", answers)
    assert result.exit_code == 0 and result.stdout == "a\nc\n"
    custom = write(tmp_path, "c.json", {"q1": "my text"})
    result = dsh_ask("-q", "Q?", "--format", "lines", "--answers", custom)
    assert result.stdout == "my text\n"
    skip = write(tmp_path, "s.json", {"q1": None})
    result = dsh_ask("-q", "Q?", "-o", "a", "--format", "lines", "--answers", skip)
    assert result.exit_code == 0 and result.stdout == ""


def test_format_lines_with_several_questions_is_a_usage_error_before_any_ui(tmp_path):
    result = dsh_ask(write(tmp_path, "q.json", BATCH), "--format", "lines")
    failed(result, 2, "dsh: USAGE: --format lines answers a single question only")


@pytest.mark.parametrize(("args", "line"), [
    ((), "dsh: USAGE: give a REQUEST"),
    (("x.json", "-q", "Q?"), "dsh: USAGE: give a REQUEST or -q"),
    (("-o", "a"), "dsh: USAGE: -o, --preview, --multi"),
    (("-", "--plain"), "dsh: USAGE: REQUEST - cannot be used with --plain"),
    (("-", "--jsonl"), "dsh: USAGE: REQUEST - cannot be used with --jsonl"),
    (("missing.json",), "dsh: USAGE: cannot read missing.json"),
])
def test_usage_errors(args, line):
    # with no REQUEST a piped stdin is the request: the bare case pipes nothing in
    failed(dsh_ask(*args, input=json.dumps(BATCH) if args else ""), 2, line)


@pytest.mark.parametrize(("request_text", "line"), [
    ("{not json", "dsh: INVALID_QUESTIONS: request: not valid JSON"),
    ('{"questions": [{"id": "a"}]}',
     "dsh: INVALID_QUESTIONS: questions[0].question: field required"),
    ('{"questions": []}', "dsh: EMPTY_QUESTIONS: "),
    ('{"questions": [{"id": "a", "question": "Q", "options": [{"label": "x"}, {"label": "x"}]}]}',
     'dsh: INVALID_QUESTIONS: questions[0].options[1].label: duplicate label "x"'),
])
def test_invalid_requests_exit_2(tmp_path, request_text, line):
    answers = write(tmp_path, "a.json", {"a": "x"})
    failed(dsh_ask("-", "--answers", answers, input=request_text), 2, line)


def test_answers_file_failures(tmp_path):
    failed(dsh_ask("-q", "Q?", "--answers", str(tmp_path / "none.json")), 2,
           "dsh: ANSWERS_FILE_ERROR: cannot read answers file")
    other = write(tmp_path, "o.json", {"other": "x"})
    failed(dsh_ask("-q", "Q?", "--answers", other), 3,
           "dsh: NO_PROVIDER: ")
    bad = write(tmp_path, "b.json", {"q1": ["nope"]})
    failed(dsh_ask("-q", "Q?", "-o", "a", "--answers", bad), 2, "dsh: INVALID_ANSWER: ")


def test_plain_answers_from_stdin_lines_with_prompts_on_stderr():
    result = dsh_ask("-q", "Deploy?", "-o", "yes", "-o", "no", "--plain", input="2\n")
    assert result.exit_code == 0
    assert result.stdout == '{"answers":[{"id":"q1","selected":["no"]}]}\n'
    assert "Deploy?" in result.stderr
    result = dsh_ask("-q", "Deploy?", "-o", "yes", "--plain", input="/cancel\n")
    assert result.exit_code == 130 and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("dsh: ASK_CANCELLED: ")
    result = dsh_ask("-q", "Deploy?", "-o", "yes", "--plain", input="")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("dsh: ASK_ABORTED: ")


def test_no_terminal_and_no_source_is_exit_3(monkeypatch):
    monkeypatch.setattr(surroundings, "tty_available", lambda: False)  # and stdio is no tty
    failed(dsh_ask("-q", "Q?", "-o", "a"), 3, "dsh: NO_PROVIDER: no terminal to ask on")


@contextlib.contextmanager
def fake_terminal(provider):
    yield provider


def test_terminal_path_timeout_is_124_and_cancel_is_130(monkeypatch):
    import dsh_cli.providers.terminal as terminal

    monkeypatch.setattr(options_module, "is_terminal", lambda stream: True)
    monkeypatch.setenv("TERM", "xterm")  # not dumb: the interactive UI, not plain lines
    monkeypatch.setattr(terminal, "terminal_provider",
                        lambda target, **kw: fake_terminal(ScriptedProvider(["late"], delay=5)))
    for flag in ("--question-timeout", "--timeout"):  # one spelling, the first kept hidden
        failed(dsh_ask("-q", "Q?", "-o", "a", flag, "0.1"), 124,
               "dsh: ASK_TIMEOUT: the question timed out")
    from dsh_cli.interaction import ASK_CANCELLED, UserInteractionError

    cancelled = UserInteractionError("the user cancelled the questions", ASK_CANCELLED)
    monkeypatch.setattr(terminal, "terminal_provider",
                        lambda target, **kw: fake_terminal(ScriptedProvider([cancelled])))
    failed(dsh_ask("-q", "Q?", "-o", "a"), 130, "dsh: ASK_CANCELLED: the user cancelled")
    answer = {"answers": [{"id": "q1", "selected": ["a"]}]}
    monkeypatch.setattr(terminal, "terminal_provider",
                        lambda target, **kw: fake_terminal(ScriptedProvider([answer])))
    assert dsh_ask("-q", "Q?", "-o", "a").stdout == '{"answers":[{"id":"q1","selected":["a"]}]}\n'


def test_answers_path_imports_no_ui_or_model_library(tmp_path):
    answers = write(tmp_path, "a.json", {"q1": "x"})
    code = (
        "import sys\n"
        "from dsh_cli.cli import main\n"
        f"sys.argv = ['dsh', 'ask', '-q', 'Q?', '--answers', {answers!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('prompt_toolkit', 'openai', 'starlette', 'uvicorn', 'sqlite3')\n"
        "print([name for name in heavy if name in sys.modules], file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=30)
    assert result.stdout == '{"answers":[{"id":"q1","selected":[],"custom":"x"}]}\n'
    assert result.stderr.strip() == "[]"
