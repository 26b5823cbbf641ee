"""Plain mode's previews and notes: ``[p N]`` hints, ``/preview N``, ``/note TEXT``.

Through the dsh under test as a subprocess (``dsh ask --plain``, ``dsh run --plain`` with
a scripted model), answers piped in as lines; prompts and previews on stderr.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.dsh_under_test import DSH

# a hostile preview: colour, a title-setting OSC and a bell must never reach the terminal;
# newlines and indentation must
HOSTILE = "services:\n  db:\n    image: \x1b[31mpostgres:16\x1b]0;pwned\x07\n    port: 5432"
REQUEST = {"questions": [
    {"id": "db", "question": "Which database?", "header": "DB", "options": [
        {"label": "PostgreSQL", "description": "relational", "preview": HOSTILE},
        {"label": "SQLite"},
        {"label": "DuckDB", "preview": "one line"}]},
    {"id": "name", "question": "A name?"},
]}


def ask_plain(tmp_path: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "request.json").write_text(json.dumps(REQUEST))
    return subprocess.run([DSH, "ask", "--plain", str(tmp_path / "request.json")],
                          input="".join(line + "\n" for line in lines), capture_output=True,
                          text=True, timeout=30)


def test_options_with_a_preview_are_marked_and_preview_prints_it_sanitised(tmp_path):
    result = ask_plain(tmp_path, ["/preview 1", "/preview 2", "/preview", "1", "acme"])
    assert result.returncode == 0, result.stderr
    err = result.stderr
    assert "  1. PostgreSQL — relational [p 1]\n  2. SQLite\n  3. DuckDB [p 3]\n" in err
    assert "/preview N prints that option's preview" in err
    assert ("  preview of 1. PostgreSQL (4 lines):\n"
            "    services:\n      db:\n        image: postgres:16\n        port: 5432\n"
            "  (end of preview)\n") in err
    assert err.count("  type /preview N, where N is an option marked [p N]: 1, 3\n") == 2
    assert "\x1b" not in err and "\x07" not in err and "pwned" not in result.stdout
    assert json.loads(result.stdout) == {"answers": [
        {"id": "db", "selected": ["PostgreSQL"]}, {"id": "name", "selected": [], "custom": "acme"}]}


def test_a_note_goes_with_the_next_answer_and_enter_keeps_a_revisited_answer(tmp_path):
    lines = ["/note  version 16 ", "1", "/back", "", "/note call it acme", "acme"]
    result = ask_plain(tmp_path, lines)
    assert result.returncode == 0, result.stderr
    assert "  note: version 16 (goes with your answer)\n" in result.stderr
    # coming back shows the note with the answer; enter keeps both
    assert "(your answer: PostgreSQL (note: version 16); enter keeps it)" in result.stderr
    assert json.loads(result.stdout) == {"answers": [
        {"id": "db", "selected": ["PostgreSQL"], "note": "version 16"},
        {"id": "name", "selected": [], "custom": "acme", "note": "call it acme"}]}


def test_a_note_can_be_removed_and_rides_on_a_skip(tmp_path):
    result = ask_plain(tmp_path, ["/note oops", "/note", "2", "/note ask me later", "/skip"])
    assert result.returncode == 0, result.stderr
    assert "  note removed\n" in result.stderr
    assert json.loads(result.stdout) == {"answers": [
        {"id": "db", "selected": ["SQLite"]},
        {"id": "name", "selected": [], "note": "ask me later"}]}


def test_a_question_without_previews_says_so_and_run_plain_returns_the_note(tmp_path):
    arguments = {"questions": [{"id": "name", "question": "A name?"}]}
    turns = [{"tool_calls": [{"name": "ask_user_question", "arguments": arguments}]},
             {"content": "done"}]
    (tmp_path / "script.json").write_text(json.dumps({"turns": turns}))
    result = subprocess.run(
        [DSH, "run", "--plain", "-m", f"script:{tmp_path / 'script.json'}", "go"],
        input="/preview 1\n/note keep it short\nacme\n", capture_output=True, text=True,
        timeout=60)
    assert result.returncode == 0, result.stderr
    assert "  no option of this question has a preview\n" in result.stderr
    assert "[p " not in result.stderr
    listed = json.loads(subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                                       text=True, timeout=30).stdout)
    latest = (listed if isinstance(listed, list) else listed["sessions"])[0]["id"]
    shown = json.loads(subprocess.run([DSH, "sessions", "show", "--json", latest],
                                      capture_output=True, text=True, timeout=30).stdout)
    (tool,) = [m["content"] for m in shown["messages"] if m["role"] == "tool"]
    assert json.loads(tool) == {"answers": [
        {"id": "name", "selected": [], "custom": "acme", "note": "keep it short"}]}
