"""A model emitting Claude Code's ``AskUserQuestion`` shape, in a real ``dsh run --answers``.

No ``id``s and ``multiSelect``: ids are derived from headers (slugged, made unique) or
``q1…``, and echoed in the tool result, read back from the stored session.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.dsh_under_test import DSH


def dsh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def tool_results() -> list[str]:
    listed = json.loads(dsh("sessions", "list", "--json").stdout)
    latest = (listed if isinstance(listed, list) else listed["sessions"])[0]["id"]
    shown = json.loads(dsh("sessions", "show", "--json", latest).stdout)
    return [m["content"] for m in shown["messages"] if m["role"] == "tool"]


CLAUDE_CODE_INPUT = {"questions": [
    {"question": "Which database?", "header": "DB Engine", "multiSelect": False,
     "options": [{"label": "PostgreSQL", "description": "relational",
                  "preview": "services:\n  db:\n    image: postgres:16"},
                 {"label": "SQLite", "description": "a file"}]},
    {"question": "Which features?", "header": "Features", "multiSelect": True,
     "options": [{"label": "Auth", "description": "log in"},
                 {"label": "Billing", "description": "pay"}]},
    {"question": "Anything else about features?", "header": "Features",
     "options": [{"label": "No", "description": "nothing"},
                 {"label": "Yes", "description": "more"}]},
    {"question": "A name?", "header": "!!!"},
]}


def test_claude_code_questions_without_ids_are_answered_under_derived_ids(tmp_path):
    turns = [{"tool_calls": [{"name": "ask_user_question", "arguments": CLAUDE_CODE_INPUT}]},
             {"content": "done"}]
    script = write(tmp_path / "script.json", {"turns": turns})
    answers = write(tmp_path / "answers.json", {
        "db-engine": {"selected": ["PostgreSQL"], "note": "v16"},
        "features": ["Auth", "Billing"], "features-2": ["No"], "q4": "acme"})
    result = dsh("run", "-m", f"script:{script}", "--answers", answers, "set up")
    assert result.returncode == 0, result.stderr
    (content,) = tool_results()
    assert json.loads(content) == {"answers": [
        {"id": "db-engine", "selected": ["PostgreSQL"], "note": "v16"},
        {"id": "features", "selected": ["Auth", "Billing"]},
        {"id": "features-2", "selected": ["No"]},
        {"id": "q4", "selected": [], "custom": "acme"},
    ]}


def test_a_given_id_is_kept_and_a_derived_one_steps_around_it(tmp_path):
    arguments = {"questions": [{"question": "First?", "header": "db"},
                               {"id": "db", "question": "Second?"}]}
    turns = [{"tool_calls": [{"name": "ask_user_question", "arguments": arguments}]},
             {"content": "done"}]
    script = write(tmp_path / "script.json", {"turns": turns})
    answers = write(tmp_path / "answers.json", {"db-2": "one", "db": "two"})
    result = dsh("run", "-m", f"script:{script}", "--answers", answers, "x")
    assert result.returncode == 0, result.stderr
    (content,) = tool_results()
    assert [item["id"] for item in json.loads(content)["answers"]] == ["db-2", "db"]
