"""A server whose form schema lies, through a real ``dsh run --jsonl``: dsh refuses the form
with -32602 and the reason before anything is shown, and never crashes or stalls on it.

One run asks every form of this module in turn (``asked``): each test reads its own call's
question and result, and the run as a whole must end well after every one of them."""

from __future__ import annotations

import json

import pytest
from mcp_client.raw_runs import by_call, run_raw_tools

# backtracks for hours with Python's re on its own default: the check's timeout gives up
REDOS = {"type": "string", "pattern": "^(a|aa)+$", "default": "a" * 60 + "!"}


def form(**properties: object) -> str:
    return json.dumps({"type": "object", "properties": properties})


CANNOT = [
    # a bound too large for a float crashed the elicitation callback: MCP_UNAVAILABLE
    ('{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1'
     + "0" * 400 + "}}}", "properties.n.minimum: must be a finite number"),
    # forms nobody can answer were shown, then could only be declined
    (form(n={"type": "integer", "minimum": 5, "maximum": 1}),
     "properties.n.minimum: no integer lies between minimum 5 and maximum 1"),
    (form(n={"type": "integer", "minimum": 1.2, "maximum": 1.8}),
     "no integer lies between minimum 1.2 and maximum 1.8"),
    (form(s={"type": "string", "minLength": 5, "maxLength": 2}),
     "properties.s.minLength: minLength 5 is greater than maxLength 2"),
    (form(s={"type": "string", "pattern": "(["}),
     "properties.s.pattern: not a valid regular expression"),
    (form(s={"type": "string", "pattern": "a" * 501}),
     "properties.s.pattern: a pattern is at most 500 characters"),
    (form(tags={"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 3}),
     "properties.tags.minItems: minItems 3 cannot be met"),
    # what the seam refuses was answered `cancel` to the server, with nothing shown
    (form(e={"type": "string", "enum": [f"o{i}" for i in range(10_000)]}),
     "properties.e.options: at most 50 options (10000)"),
    (form(**{f"k{i}": {"type": "string"} for i in range(30)}),
     "questions: at most 20 questions (30)"),
    (form(e={"type": "string", "enum": ["a", "a\u200b"]}),
     'properties.e.options[1].label: duplicate label "a" as shown'),
    (form(**{"": {"type": "string"}}), "id must not be empty"),

]
CANNOT_IDS = ["bound-10e400", "min-over-max", "no-integer-in-range",
              "minlength-over-maxlength", "bad-regex", "pattern-over-500",
              "minitems-over-choices", "enum-10000", "30-properties", "look-alike-enum",
              "blank-key"]


BENT = [
    form(e={"type": "string", "enum": ["a", "b"], "default": "c"}),  # default dropped
    form(s={"type": "string", "format": "ipv4"}),  # unknown format: plain text
    form(s={"type": "string", "pattern": "^[a-z][a-z0-9-]*$"}),
    form(s={"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"}),  # a repeat in a repeat
    form(s=REDOS),  # its default cannot be checked in time: dropped, the form asked

]
BENT_IDS = ["default-not-in-enum", "unknown-format", "plain-pattern", "slug-pattern",
            "backtracking-pattern"]


@pytest.fixture(scope="module")
def asked(tmp_path_factory, raw_form_http) -> dict[str, list[dict]]:
    """Each schema of this module: the events of its call in one real ``dsh run --jsonl``
    that asks them all in turn, a run that ends well (no traceback, the turn completed)."""
    schemas = [schema for schema, _ in CANNOT] + BENT
    result, events = run_raw_tools(tmp_path_factory.mktemp("forms"),
                                   [("ask", {"schema": schema}) for schema in schemas],
                                   raw_form_http)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert events[-1]["type"] == "turn/completed"
    return dict(zip(schemas, by_call(events, len(schemas)), strict=True))


@pytest.mark.parametrize(("schema", "reason"), CANNOT, ids=CANNOT_IDS)
def test_a_form_dsh_cannot_ask_sanely_is_refused_with_the_reason(asked, schema, reason):
    events = asked[schema]
    assert not [event for event in events if event["type"] == "question/requested"]
    [result] = [event for event in events if event["type"] == "tool/result"]
    assert result["error"]["code"] == "MCP_TOOL_ERROR"
    assert "dsh cannot ask this form: " in result["error"]["message"]
    assert reason in result["error"]["message"]


@pytest.mark.parametrize("schema", BENT, ids=BENT_IDS)
def test_a_form_that_only_bends_the_rules_is_asked(asked, schema):
    events = asked[schema]
    [asked] = [event for event in events if event["type"] == "question/requested"]
    assert "default" not in asked["questions"][0]
    [result] = [event for event in events if event["type"] == "tool/result"]
    assert json.loads(result["content"]) == {"f": {"action": "cancel"}}  # stdin closed
