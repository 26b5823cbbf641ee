"""INVALID_ANSWER says what would do: the valid labels, and every bad answer at once."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH

REQUEST = {"questions": [
    {"id": "db", "question": "Which database?", "options": [
        {"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}, {"label": "MySQL"}]},
    {"id": "tier", "question": "Which tier?", "options": [
        {"label": "free"}, {"label": "pro"}]},
]}


def ask(tmp_path, answers: dict) -> subprocess.CompletedProcess[str]:
    (tmp_path / "request.json").write_text(json.dumps(REQUEST))
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    return subprocess.run([DSH, "ask", "--answers", str(tmp_path / "answers.json"),
                           str(tmp_path / "request.json")], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def test_every_bad_answer_is_named_with_the_labels_that_would_do(tmp_path):
    done = ask(tmp_path, {"db": ["Postgres"], "tier": ["enterprise"]})
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("dsh: INVALID_ANSWER: ")
    assert ('db.selected: unknown label "Postgres"; did you mean "PostgreSQL (Recommended)"? '
            'the labels are "PostgreSQL (Recommended)", "SQLite", "MySQL"') in line
    assert 'tier.selected: unknown label "enterprise"; the labels are "free", "pro"' in line


def test_a_long_list_of_labels_is_cut_with_a_count(tmp_path):
    REQUEST["questions"][1]["options"] = [{"label": f"t{n}"} for n in range(14)]
    try:
        done = ask(tmp_path, {"db": ["SQLite"], "tier": ["zz"]})
    finally:
        REQUEST["questions"][1]["options"] = [{"label": "free"}, {"label": "pro"}]
    assert done.returncode == 2
    assert '"t9" and 4 more' in done.stderr and '"t10"' not in done.stderr
