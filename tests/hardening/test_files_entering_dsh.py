"""Files that enter dsh through `dsh run`: a script nested too deeply, an answers file
with a lone surrogate. Each is a real child process; the line it prints is pinned."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH

ASK = {"id": "name", "question": "Project name?", "options": [{"label": "acme"},
                                                              {"label": "other"}]}
SCRIPT = {"turns": [
    {"content": "Asking.", "tool_calls": [{"name": "ask_user_question",
                                           "arguments": {"questions": [ASK]}}]},
    {"content": "Done."},
]}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([DSH, "run", "--no-input", *args], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_a_script_nested_100000_deep_is_a_script_error_like_any_bad_script(tmp_path):
    deep, bad = tmp_path / "deep.json", tmp_path / "bad.json"
    deep.write_text("[" * 100_000)
    bad.write_text("{not json")
    nested, broken = _run("-m", f"script:{deep}", "hi"), _run("-m", f"script:{bad}", "hi")
    assert nested.stderr == f"dsh: SCRIPT_ERROR: script {deep}: JSON nested too deeply\n"
    assert nested.returncode == broken.returncode == 1
    assert broken.stderr.startswith("dsh: SCRIPT_ERROR: ")


def test_a_lone_surrogate_in_an_answers_file_becomes_u_fffd_and_is_stored(tmp_path):
    script, answers = tmp_path / "script.json", tmp_path / "answers.json"
    script.write_text(json.dumps(SCRIPT))
    answers.write_text('{"name": "ac\\ud800me"}')  # valid JSON, not valid Unicode
    result = _run("-m", f"script:{script}", "--answers", str(answers), "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done.\n" and result.stderr == ""
    listed = subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                            text=True, timeout=30, check=True)
    session = json.loads(listed.stdout)[0]["id"]
    shown = subprocess.run([DSH, "sessions", "show", session, "--json"], capture_output=True,
                           text=True, timeout=30, check=True)
    tool = next(m for m in json.loads(shown.stdout)["messages"] if m["role"] == "tool")
    assert json.loads(tool["content"])["answers"] == [
        {"id": "name", "selected": [], "custom": "ac\ufffdme"}]


def test_a_lone_surrogate_in_a_script_is_replaced_too(tmp_path):
    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"content": "odd \\udc00 text"}]}')
    result = _run("-m", f"script:{script}", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "odd \ufffd text\n"
