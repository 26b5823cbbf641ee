"""Labels, ids and questions are judged as the screen shows them, across a real `dsh ask`
and a real `dsh run --jsonl`: invisible characters cannot make two options look the same
or a question look blank."""

from __future__ import annotations

import json
import subprocess

import pytest
from harness.dsh_under_test import DSH
from relay_peer import Peer, asking, script


def _ask(tmp_path, questions: list[dict]) -> subprocess.CompletedProcess:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"questions": questions}), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text("{}", encoding="utf-8")
    return subprocess.run([DSH, "ask", str(request), "--answers", str(answers)],
                          capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("labels", "path", "rule"), [
    (["Yes", "Yes\u200b"], "questions[0].options[1].label",
     'duplicate label "Yes" as shown (the same as options[0])'),
    (["Yes", "Ye\u200bs"], "questions[0].options[1].label",
     'duplicate label "Yes" as shown (the same as options[0])'),
    (["Yes", "\u202eYes\u202c"], "questions[0].options[1].label",
     'duplicate label "Yes" as shown (the same as options[0])'),
    (["Yes", "\u200b\u200c\u2060"], "questions[0].options[1].label",
     "label shows as blank (only invisible or control characters)"),
])
def test_labels_that_look_the_same_or_blank_are_invalid_questions(tmp_path, labels, path,
                                                                  rule):
    result = _ask(tmp_path, [{"id": "q", "question": "Go?",
                              "options": [{"label": label} for label in labels]}])
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"dsh: INVALID_QUESTIONS: {path}: {rule}\n"


def test_a_question_or_id_of_invisible_characters_is_blank(tmp_path):
    blank_question = _ask(tmp_path, [{"id": "q", "question": "\u200b\u2066\u2069\ufeff"}])
    assert blank_question.returncode == 2
    assert blank_question.stderr == ("dsh: INVALID_QUESTIONS: questions[0].question: question "
                                     "shows as blank (only invisible or control characters)\n")
    twin_ids = _ask(tmp_path, [{"id": "q", "question": "A?"},
                               {"id": "q\u200b", "question": "B?"}])
    assert twin_ids.returncode == 2
    assert twin_ids.stderr == ('dsh: INVALID_QUESTIONS: questions[1].id: duplicate id "q" as '
                               "shown (the same as questions[0].id)\n")


def test_distinct_labels_with_emoji_joiners_still_pass(tmp_path):
    result = _ask(tmp_path, [{"id": "q", "question": "Who?",
                              "options": [{"label": "\U0001f468\u200d\U0001f469"},
                                          {"label": "\U0001f468\U0001f469"}]}])
    # the ZWJ sequence is one glyph: two labels that show differently, so the request is fine
    # and the empty answers file is what fails (NO_PROVIDER for the id, exit 3 for dsh ask)
    assert "INVALID_QUESTIONS" not in result.stderr
    assert result.returncode == 3


def test_a_model_asking_look_alike_options_gets_invalid_questions_over_jsonl(tmp_path):
    questions = [{"id": "go", "question": "Deploy?",
                  "options": [{"label": "Yes"}, {"label": "Ye\u200bs"}, {"label": "No"}]}]
    model = script(tmp_path / "s.json", asking(questions=questions), {"content": "Done."})
    dsh = Peer("run", "--jsonl", "--model", model, "hi")
    try:
        result = dsh.until("tool/result")
        assert result["error"]["code"] == "INVALID_QUESTIONS"
        assert result["error"]["message"].startswith("questions[0].options[1].label: ")
        assert not [e for e in dsh.events if e["type"] == "question/requested"]
        assert dsh.finish() == 0
    finally:
        dsh.kill()
