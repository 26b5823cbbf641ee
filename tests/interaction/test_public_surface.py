"""The seam's public names are pinned, and importing it costs nothing heavy.

Which dsh layers the seam may import is checked statically in ``tests/test_architecture.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import dsh_cli.interaction as seam

PUBLIC_NAMES = sorted([
    "ASK_ABORTED",
    "ASK_CANCELLED",
    "ASK_DECLINED",
    "ASK_TIMEOUT",
    "AbortSignal",
    "Agent",
    "AgentRegistry",
    "AskContext",
    "AskDefault",
    "AskSource",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "BAD_RESPONSE",
    "CALLER_NOT_LIVE",
    "DELEGATED_CALLER",
    "DUPLICATE_PROVIDER",
    "Deadline",
    "ELICITATION_FIELDS",
    "EMPTY_QUESTIONS",
    "HarnessError",
    "INVALID_ANSWER",
    "INVALID_QUESTIONS",
    "LIMITS",
    "NOT_PENDING",
    "NO_PROVIDER",
    "PendingEntry",
    "PendingQuestions",
    "ScriptedProvider",
    "TextRule",
    "UserInteraction",
    "UserInteractionError",
    "UserInteractionProvider",
    "WRONG_SESSION",
    "check_questions",
    "display_label",
    "display_width",
    "is_recommended",
    "problem_with",
    "sanitize",
    "sanitize_line",
    "validate_answer",
])


def test_public_names_are_pinned():
    assert sorted(seam.__all__) == PUBLIC_NAMES
    assert len(set(seam.__all__)) == len(seam.__all__)


def test_every_public_name_exists():
    assert [name for name in seam.__all__ if not hasattr(seam, name)] == []


def test_the_vocabulary_has_no_forbidden_fields():
    fields = set()
    for model in (seam.AskUserQuestionOption, seam.AskUserQuestionItem,
                  seam.AskUserQuestionAnswerItem, seam.AskUserQuestionAnswer):
        fields |= set(model.model_fields)
    assert fields.isdisjoint({"value", "recommended", "allow_custom", "desc"})
    # what a model may set; the rest is for askers inside dsh (elicitation)
    assert set(seam.AskUserQuestionItem.model_fields) - seam.ELICITATION_FIELDS == {
        "id", "question", "detail", "header", "options", "multi_select"}
    assert {"other", "required", "default", "rule", "min_items",
                                       "max_items", "warning"} == seam.ELICITATION_FIELDS
    assert set(seam.AskUserQuestionOption.model_fields) == {"label", "description", "preview"}
    assert set(seam.AskUserQuestionAnswerItem.model_fields) == {"id", "selected", "custom",
                                                                "note"}


HEAVY = ("prompt_toolkit", "openai", "starlette", "uvicorn", "sqlite3", "httpx")


def loaded_after(statement: str) -> list[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.splitlines()[-1])


def offending(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_importing_the_seam_imports_nothing_heavy():
    modules = loaded_after("import dsh_cli.interaction")
    assert "dsh_cli.interaction" in modules
    assert offending(modules, HEAVY) == []
