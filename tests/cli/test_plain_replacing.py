"""Plain mode asks before Other text replaces options, as the terminal UI does:
``1 3 extra thing`` is either that text, or options 1 and 3 with it as a note."""

from __future__ import annotations

import json
import subprocess

import pytest
from harness.dsh_under_test import DSH

FEATURES = {"questions": [{"id": "f", "question": "Which features?", "multi_select": True,
                           "options": [{"label": "Auth"}, {"label": "Billing"},
                                       {"label": "Admin"}]}]}
WARNING = ('  the text replaces options 1, 3 · enter: use the text · n: keep 1, 3 and add '
           '"extra thing" as a note\n'
           "confirm (enter: the text, n: the options with a note, or another answer)> ")


def ask(tmp_path, lines: str, request: dict = FEATURES) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    return subprocess.run([DSH, "ask", "--plain", str(path)], input=lines,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("reply", "answer"), [
    ("n", {"id": "f", "selected": ["Auth", "Admin"], "note": "extra thing"}),
    ("", {"id": "f", "selected": [], "custom": "1 3 extra thing"}),
    ("2", {"id": "f", "selected": ["Billing"]}),  # another answer typed instead
])
def test_numbers_then_text_asks_first_and_the_reply_decides(tmp_path, reply, answer):
    result = ask(tmp_path, f"1 3 extra thing\n{reply}\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"answers": [answer]}
    assert f"> 1 3 extra thing\n{WARNING}{reply}\n" in result.stderr


def test_a_note_given_first_is_kept_with_the_one_the_text_adds(tmp_path):
    result = ask(tmp_path, "/note v2\n1 3 extra thing\nn\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answers"][0]["note"] == "v2 extra thing"


@pytest.mark.parametrize("line", ["1 3 2024 plans", "9 lives", "Auth and more"])
def test_text_whose_numbers_are_no_selection_is_text_at_once(tmp_path, line):
    result = ask(tmp_path, f"{line}\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"answers": [{"id": "f", "selected": [],
                                                     "custom": line}]}
    assert "replaces" not in result.stderr


def test_a_strict_choice_has_no_text_to_replace_with(tmp_path):
    strict = json.loads(json.dumps(FEATURES))
    strict["questions"][0]["other"] = False
    result = ask(tmp_path, "1 3 extra thing\n1 3\n", strict)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answers"][0]["selected"] == ["Auth", "Admin"]
    assert "replaces" not in result.stderr and "type a number" in result.stderr
