"""``dsh schema`` and ``dsh schema --answer``: bare JSON-schema objects on stdout."""

from __future__ import annotations

import json

from click.testing import CliRunner

from dsh_cli.cli import main
from dsh_cli.tools import AskUserQuestionTool

FORBIDDEN_KEYS = {"value", "recommended", "allow_custom", "desc", "detail"}


def invoke(*args: str):
    result = CliRunner().invoke(main, ["schema", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def keys_anywhere(node) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(keys_anywhere(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(keys_anywhere(v) for v in node))
    return set()


def resolve(schema: dict, node: dict) -> dict:
    """Follow a local ``$ref`` (pydantic puts nested models under ``$defs``)."""
    ref = node.get("$ref")
    if ref is None:
        return node
    assert ref.startswith("#/$defs/"), ref
    return schema["$defs"][ref.removeprefix("#/$defs/")]


def test_schema_prints_the_tools_parameters():
    document = invoke()
    assert document == AskUserQuestionTool().parameters()


def test_schema_is_a_bare_schema_object_not_a_tool_entry():
    document = invoke()
    assert document["type"] == "object"
    assert document["required"] == ["questions"]
    assert "function" not in document and "name" not in document
    item = document["properties"]["questions"]["items"]
    assert sorted(item["required"]) == ["id", "question"]


def test_schema_shows_no_forbidden_field():
    assert keys_anywhere(invoke()).isdisjoint(FORBIDDEN_KEYS)


def test_schema_output_is_one_json_document_ending_in_a_newline():
    result = CliRunner().invoke(main, ["schema"])
    assert result.output.endswith("\n")
    assert json.loads(result.output) == json.loads(result.output.strip())


def test_schema_answer_describes_the_answer_batch():
    document = invoke("--answer")
    assert document["type"] == "object"
    assert document["required"] == ["answers"]
    answers = document["properties"]["answers"]
    assert answers["type"] == "array"
    item = resolve(document, answers["items"])
    assert item["type"] == "object"
    assert set(item["properties"]) == {"id", "selected", "custom", "note"}
    assert "id" in item["required"]
    selected = item["properties"]["selected"]
    assert selected["type"] == "array" and selected["items"]["type"] == "string"
    assert keys_anywhere(document).isdisjoint({"value", "recommended", "allow_custom", "desc"})


def test_schema_answer_differs_from_the_parameters():
    assert invoke("--answer") != invoke()


def test_schema_help_mentions_answer():
    result = CliRunner().invoke(main, ["schema", "--help"])
    assert result.exit_code == 0
    assert "--answer" in result.output


def test_schema_teaches_an_options_preview_with_its_caps():
    from dsh_cli.interaction.validation import LIMITS

    item = invoke()["properties"]["questions"]["items"]
    preview = item["properties"]["options"]["items"]["properties"]["preview"]
    assert preview["type"] == "string" and preview["maxLength"] == LIMITS["preview"]
    assert f"{LIMITS['preview_lines']} lines" in preview["description"]
    assert "preview" in AskUserQuestionTool().description


def test_schema_answer_documents_the_note():
    document = invoke("--answer")
    item = resolve(document, document["properties"]["answers"]["items"])
    assert "present only when given" in item["properties"]["note"]["description"]
    assert "note" not in item.get("required", [])
    assert "'note'" in AskUserQuestionTool().description
