"""``dsh ask --preview LABEL=FILE`` and a request's previews, through the JSON-lines relay.

The preview reaches the controller in ``question/requested``; a ``note`` in the answer
frame comes back in the answer on stdout's ``question/resolved``.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from harness.dsh_under_test import DSH

PREVIEW = "services:\n  db:\n    image: postgres:16\n"


def ask_jsonl(*args: str, answers: list[dict[str, object]]) -> tuple[dict, dict, str]:
    """The ``question/requested`` event, the ``question/resolved`` one, and stderr."""
    process = subprocess.Popen([DSH, "ask", "--jsonl", *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        requested = json.loads(process.stdout.readline())
        frame = {"type": "question/answer", "rpc_id": requested["rpc_id"], "answers": answers}
        out, err = process.communicate(json.dumps(frame) + "\n", timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    return requested, json.loads(out.splitlines()[-1]), err


def test_a_preview_from_a_file_reaches_the_relay_and_a_note_comes_back(tmp_path):
    (tmp_path / "pg.yaml").write_text(PREVIEW)
    requested, resolved, _ = ask_jsonl(
        "-q", "Which database?", "-o", "PostgreSQL", "-o", "SQLite", "--id", "db",
        "--preview", f"PostgreSQL={tmp_path / 'pg.yaml'}",
        answers=[{"id": "db", "selected": ["PostgreSQL"], "note": " v16 "}])
    options = requested["questions"][0]["options"]
    # the file's last newline ends its last line: three lines, not four
    assert options == [{"label": "PostgreSQL", "preview": PREVIEW.removesuffix("\n")},
                       {"label": "SQLite"}]
    assert resolved["answer"] == {"answers": [
        {"id": "db", "selected": ["PostgreSQL"], "note": "v16"}]}


def usage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, "ask", *args], capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, line", [
    (["-q", "DB?", "-o", "a", "--preview", "b=F"],
     "dsh: USAGE: --preview b=F: no -o option is labelled 'b'"),
    (["-q", "DB?", "-o", "a", "--preview", "a"], "dsh: USAGE: --preview a: expected LABEL=FILE"),
    (["-q", "DB?", "--preview", "a=F"],
     "dsh: USAGE: --preview needs the option it previews (-o LABEL)"),
    (["-q", "DB?", "-o", "a", "--preview", "a=/nonexistent/p.txt"],
     "dsh: USAGE: --preview a=/nonexistent/p.txt: cannot read /nonexistent/p.txt: "
     "No such file or directory"),
])
def test_a_bad_preview_flag_is_one_usage_line_and_exit_2(args, line):
    result = usage(*args)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", line + "\n")


def test_a_preview_file_over_the_line_cap_is_invalid_questions(tmp_path):
    (tmp_path / "long.txt").write_text("x\n" * 201)
    result = usage("-q", "DB?", "-o", "a", "--preview", f"a={tmp_path / 'long.txt'}")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("dsh: INVALID_QUESTIONS: questions[0].options[0].preview: "
                             "preview has more than 200 lines (201)\n")


def test_a_huge_preview_file_is_refused_from_its_first_characters(tmp_path):
    # read up to the cap and one more: a 30 MB file is never held whole
    (tmp_path / "huge.txt").write_text("x" * 30_000_000)
    result = usage("-q", "DB?", "-o", "a", "--preview", f"a={tmp_path / 'huge.txt'}")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"dsh: INVALID_QUESTIONS: --preview a={tmp_path / 'huge.txt'}: "
                             f"{tmp_path / 'huge.txt'} is longer than 10000 characters\n")
