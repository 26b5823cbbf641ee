"""One source for the caps: the schema, `dsh schema --help` and the man page show LIMITS."""

from __future__ import annotations

import re
import subprocess

import pytest
from harness.dsh_under_test import DSH, ROOT

from dsh_cli.interaction import AskUserQuestionRequest, UserInteractionError
from dsh_cli.interaction.validation import LIMITS, check_questions, limits_text
from dsh_cli.tools.ask_user_question import PARAMETERS


def test_the_schema_states_the_validators_caps():
    questions = PARAMETERS["properties"]["questions"]
    item = questions["items"]["properties"]
    option = item["options"]["items"]["properties"]
    assert questions["maxItems"] == LIMITS["questions"]
    assert item["options"]["maxItems"] == LIMITS["options"]
    assert item["header"]["maxLength"] == LIMITS["header"]
    assert item["question"]["maxLength"] == LIMITS["question"]
    assert option["label"]["maxLength"] == LIMITS["label"]
    assert option["description"]["maxLength"] == LIMITS["description"]


def test_schema_help_and_the_man_page_say_limits_text():
    help_text = subprocess.run([DSH, "schema", "--help"], capture_output=True, text=True,
                               timeout=60, check=True).stdout
    man = (ROOT / "man" / "dsh.1").read_text(encoding="utf-8")
    man_words = " ".join(line for line in man.splitlines() if not line.startswith("."))
    for text in (help_text, man_words):
        assert limits_text() in " ".join(text.split())
    for name in ("questions", "header", "label", "description", "preview", "preview_lines"):
        assert str(LIMITS[name]) in limits_text()


def test_a_header_at_the_stated_cap_passes_and_one_more_is_refused():
    def batch(header: str) -> AskUserQuestionRequest:
        return AskUserQuestionRequest.model_validate(
            {"questions": [{"id": "a", "question": "Q?", "header": header}]})

    check_questions(batch("h" * LIMITS["header"]))
    with pytest.raises(UserInteractionError) as caught:
        check_questions(batch("h" * (LIMITS["header"] + 1)))
    assert re.search(rf"longer than {LIMITS['header']} characters", caught.value.message)
