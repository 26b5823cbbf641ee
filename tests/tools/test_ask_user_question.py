"""The model-facing tool ``ask_user_question``: schema, description, decoding, result."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_cli.interaction import (
    AbortSignal,
    AgentRegistry,
    AskUserQuestionAnswer,
    ScriptedProvider,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.tools import INVALID_ARGS, AskUserQuestionTool, ToolContext, ToolRegistry
from dsh_cli.tools.ask_user_question import decode_questions

FORBIDDEN_KEYS = {"value", "recommended", "allow_custom", "desc", "detail"}


def keys_anywhere(node: Any) -> set[str]:
    """Every property name and key in a JSON schema, at any depth."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            found |= keys_anywhere(value)
    elif isinstance(node, list):
        for value in node:
            found |= keys_anywhere(value)
    return found


@pytest.fixture
def schema():
    return AskUserQuestionTool().parameters()


def test_the_schema_requires_questions_and_per_item_id_and_question(schema):
    assert schema["type"] == "object"
    assert schema["required"] == ["questions"]
    questions = schema["properties"]["questions"]
    assert questions["type"] == "array"
    item = questions["items"]
    assert item["type"] == "object"
    assert sorted(item["required"]) == ["id", "question"]
    assert set(item["properties"]) == {"id", "question", "header", "options", "multi_select"}
    assert item["properties"]["id"]["type"] == "string"
    assert item["properties"]["question"]["type"] == "string"
    assert item["properties"]["header"]["type"] == "string"
    assert item["properties"]["multi_select"]["type"] == "boolean"
    option = item["properties"]["options"]["items"]
    assert item["properties"]["options"]["type"] == "array"
    assert option["required"] == ["label"]
    assert set(option["properties"]) == {"label", "description", "preview"}


def test_the_schema_shows_no_forbidden_field(schema):
    assert keys_anywhere(schema).isdisjoint(FORBIDDEN_KEYS)


def test_the_schema_is_plain_json():
    assert json.loads(json.dumps(AskUserQuestionTool().spec())) == AskUserQuestionTool().spec()


@pytest.mark.parametrize("point", [
    "only when",          # ask only when inference is not safe
    "inference",
    "concise",
    "2-4",                 # options per question
    "1-4",                 # questions per call
    "(Recommended)",
    "first",
    "Other",
    "12 characters",
    "ids",
])
def test_the_description_guides_the_model(point):
    description = AskUserQuestionTool().description.replace("\u2013", "-")
    assert point.lower() in description.lower()


def test_the_description_forbids_an_other_option():
    description = AskUserQuestionTool().description
    assert "never add an 'other' option" in description.lower().replace('"', "'")


# -- decoding and forwarding -----------------------------------------------------------------

DB_ARGS = {"questions": [{"id": "db", "question": "Which database?",
                          "options": [{"label": "PostgreSQL (Recommended)"},
                                      {"label": "SQLite"}]}]}


def ask_tool(run, arguments, *replies, **context_fields):
    """Run the tool through the registry; (result, requests the provider saw)."""

    async def main():
        ui = context_fields.pop("ui", None) or UserInteraction()
        provider = ScriptedProvider(list(replies))
        ui.register_provider(provider)
        ctx = ToolContext(user_interaction=ui, **context_fields)
        result = await ToolRegistry([AskUserQuestionTool()]).execute(
            "ask_user_question", arguments, ctx)
        return result, provider.requests

    return run(main())


def skip(*ids):
    return AskUserQuestionAnswer.model_validate(
        {"answers": [{"id": i, "selected": []} for i in ids]})


def test_the_result_is_compact_json_with_keys_in_order(run):
    arguments = {"questions": [
        {"id": "db", "question": "Which database?",
         "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]},
        {"id": "name", "question": "Project name?"},
        {"id": "later", "question": "Skip me?", "options": [{"label": "yes"}]},
    ]}
    reply = {"answers": [{"custom": None, "selected": ["PostgreSQL"], "id": "db"},
                         {"custom": "acme", "id": "name", "selected": []},
                         {"id": "later", "selected": []}]}
    result, _ = ask_tool(run, json.dumps(arguments), reply)
    assert not result.is_error
    assert result.error is None
    assert result.content == (
        '{"answers":[{"id":"db","selected":["PostgreSQL"]},'
        '{"id":"name","selected":[],"custom":"acme"},'
        '{"id":"later","selected":[]}]}'
    )


def test_non_ascii_answers_stay_readable(run):
    arguments = {"questions": [{"id": "db", "question": "数据库?",
                                "options": [{"label": "PostgreSQL (推荐)"}]}]}
    reply = {"answers": [{"id": "db", "selected": ["PostgreSQL (推荐)"]}]}
    result, _ = ask_tool(run, arguments, reply)
    assert result.content == '{"answers":[{"id":"db","selected":["PostgreSQL (推荐)"]}]}'


def test_questions_agent_signal_and_call_id_reach_the_seam(run):
    agents = AgentRegistry()
    agent = agents.spawn("main")
    signal = AbortSignal()
    ui = UserInteraction(agents=agents)
    _, (request,) = ask_tool(run, json.dumps(DB_ARGS), skip("db"), ui=ui, agent=agent,
                             signal=signal, call_id="call_9")
    assert request.questions_json() == [{
        "id": "db", "question": "Which database?",
        "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}],
        "multi_select": False,
    }]
    assert request.agent is agent
    assert request.call_id == "call_9"
    assert request.signal is signal


def test_a_seam_error_becomes_a_structured_result(run):
    cancelled = UserInteractionError("the user cancelled the questions", "ASK_CANCELLED")
    result, _ = ask_tool(run, DB_ARGS, cancelled)
    assert result.is_error
    assert result.error == {"name": "UserInteractionError", "code": "ASK_CANCELLED",
                            "message": "the user cancelled the questions"}
    assert result.content == ('{"error":{"name":"UserInteractionError","code":"ASK_CANCELLED",'
                              '"message":"the user cancelled the questions"}}')


@pytest.mark.parametrize(("arguments", "code"), [
    ({"questions": []}, "EMPTY_QUESTIONS"),
    ({"questions": [{"id": "a", "question": "A?"}, {"id": "a", "question": "B?"}]},
     "INVALID_QUESTIONS"),
], ids=["empty", "duplicate-id"])
def test_seam_validation_errors_reach_the_model(run, arguments, code):
    result, requests = ask_tool(run, arguments, skip("a"))
    assert result.error["code"] == code
    assert requests == []


def test_no_provider_reaches_the_model_as_a_result(run):
    async def main():
        ctx = ToolContext(user_interaction=UserInteraction())
        return await ToolRegistry([AskUserQuestionTool()]).execute(
            "ask_user_question", DB_ARGS, ctx)

    result = run(main())
    assert (result.error["name"], result.error["code"]) == ("UserInteractionError",
                                                            "NO_PROVIDER")


# -- forgiving decoding --------------------------------------------------------------------------


def decoded(run, arguments):
    """The questions the seam received, as JSON."""
    raw = arguments if isinstance(arguments, dict) else json.loads(arguments)
    questions = raw["questions"]
    if isinstance(questions, str):
        questions = json.loads(questions)
    item_ids = [q["id"] for q in questions]
    result, requests = ask_tool(run, arguments, skip(*item_ids))
    assert not result.is_error, result.content
    return requests[0].questions_json()


def test_questions_sent_as_a_json_string(run):
    arguments = json.dumps({"questions": json.dumps(DB_ARGS["questions"])})
    assert decoded(run, arguments) == decoded(run, json.dumps(DB_ARGS))


def test_options_sent_as_plain_strings(run):
    arguments = {"questions": [{"id": "db", "question": "Which database?",
                                "options": ["PostgreSQL (Recommended)", "SQLite"]}]}
    assert decoded(run, arguments) == decoded(run, DB_ARGS)


def test_options_mixing_strings_and_objects(run):
    arguments = {"questions": [{"id": "db", "question": "Which database?",
                                "options": ["PostgreSQL (Recommended)",
                                            {"label": "SQLite", "description": "a file"}]}]}
    options = decoded(run, arguments)[0]["options"]
    assert options == [{"label": "PostgreSQL (Recommended)"},
                       {"label": "SQLite", "description": "a file"}]


def test_multi_select_in_camel_case(run):
    arguments = {"questions": [{"id": "f", "question": "Features?", "multiSelect": True,
                                "options": ["auth", "billing"]}]}
    assert decoded(run, arguments)[0]["multi_select"] is True


def test_unknown_keys_are_ignored(run):
    arguments = {"thoughts": "hmm", "questions": [
        {"id": "db", "question": "Which database?", "priority": 3,
         "options": [{"label": "PostgreSQL (Recommended)", "emoji": "🐘"},
                     {"label": "SQLite"}]}]}
    assert decoded(run, arguments) == decoded(run, DB_ARGS)


def test_the_model_cannot_smuggle_seam_only_fields(run):
    arguments = {"questions": [{"id": "db", "question": "Which database?",
                                "options": [{"label": "A", "value": "a", "recommended": True}],
                                "allow_custom": False}]}
    question = decoded(run, arguments)[0]
    assert question["options"] == [{"label": "A"}]
    assert "allow_custom" not in question


@pytest.fixture
def invalid_args(run):
    """``invalid_args(arguments)``: the INVALID_ARGS message; the provider never asked."""

    def check(arguments):
        result, requests = ask_tool(run, arguments, skip("x"))
        assert result.is_error
        assert (result.error["name"], result.error["code"]) == ("ToolError", INVALID_ARGS)
        assert requests == []
        return result.error["message"]

    return check


def test_a_missing_id_is_derived_not_refused():
    # Claude Code's AskUserQuestion has no ids: the header slugged, or q1..., made unique
    items = decode_questions({"questions": [
        {"question": "A?", "header": "DB Engine!"}, {"question": "B?", "header": "db engine"},
        {"question": "C?"}, {"question": "D?", "header": "***"}]})
    assert [item.id for item in items] == ["db-engine", "db-engine-2", "q3", "q4"]


def test_a_missing_question_names_the_path(invalid_args):
    message = invalid_args({"questions": [{"id": "a", "question": "A?"}, {"id": "b"}]})
    assert "questions[1].question: field required" in message


def test_missing_questions(invalid_args):
    assert "questions" in invalid_args({"asks": []})


def test_an_option_without_a_label_names_the_path(invalid_args):
    message = invalid_args({"questions": [{"id": "a", "question": "A?",
                                           "options": ["x", {"description": "no label"}]}]})
    assert message.startswith("questions[0].options[1].label")


@pytest.mark.parametrize("arguments", [
    '{"questions": [',
    "not json at all",
    '{"questions": "[{\\"id\\": "}',
], ids=["truncated", "prose", "truncated-inner-string"])
def test_malformed_json_is_invalid_args(invalid_args, arguments):
    assert invalid_args(arguments)


@pytest.mark.parametrize("arguments", [
    "[]",
    '"questions"',
    {"questions": {"id": "a", "question": "A?"}},
    {"questions": ["Which database?"]},
    {"questions": [{"id": 7, "question": "A?"}]},
], ids=["array", "string", "questions-object", "question-as-string", "id-not-string"])
def test_other_shapes_are_invalid_args(invalid_args, arguments):
    assert invalid_args(arguments)


# -- two asks in one assistant step -------------------------------------------------------------


def test_two_asks_in_one_step_are_asked_in_order(run):
    from dsh_cli.agent.loop import AgentLoop
    from dsh_cli.models.base import Completion, ModelToolCall

    first = {"questions": [{"id": "db", "question": "Which database?", "options": ["A", "B"]}]}
    second = {"questions": [{"id": "name", "question": "Project name?"}]}

    class TwoAsks:
        name = "two-asks"

        def __init__(self) -> None:
            self.turns = 0

        async def stream(self, messages, tools):
            self.turns += 1
            if self.turns == 1:
                yield Completion("", [
                    ModelToolCall("call_1", "ask_user_question", json.dumps(first)),
                    ModelToolCall("call_2", "ask_user_question", json.dumps(second)),
                ])
            else:
                results = [m["content"] for m in messages if m["role"] == "tool"]
                yield Completion(json.dumps(results))

    async def main():
        ui = UserInteraction()
        provider = ScriptedProvider([
            {"answers": [{"id": "db", "selected": ["B"]}]},
            {"answers": [{"id": "name", "selected": [], "custom": "acme"}]},
        ])
        ui.register_provider(provider)
        loop = AgentLoop(model=TwoAsks(), tools=ToolRegistry([AskUserQuestionTool()]), ui=ui)
        final = await loop.run_turn("start")
        return final, provider.requests

    final, requests = run(main())
    assert [r.call_id for r in requests] == ["call_1", "call_2"]
    assert json.loads(final) == ['{"answers":[{"id":"db","selected":["B"]}]}',
                                 '{"answers":[{"id":"name","selected":[],"custom":"acme"}]}']


def test_slips_combined(run):
    inner = [{"id": "f", "question": "Features?", "multiSelect": True,
              "options": ["auth", "billing"], "note": "ignored"}]
    question = decoded(run, json.dumps({"questions": json.dumps(inner)}))[0]
    assert question == {"id": "f", "question": "Features?",
                        "options": [{"label": "auth"}, {"label": "billing"}],
                        "multi_select": True}


def test_a_path_is_named_inside_questions_sent_as_a_string(invalid_args):
    message = invalid_args({"questions": json.dumps([{"id": "a"}])})
    assert "questions[0].question: field required" in message


@pytest.mark.parametrize("arguments", ["", "{}", {"questions": None}],
                         ids=["empty-text", "empty-object", "null"])
def test_no_questions_is_invalid_args(invalid_args, arguments):
    assert "questions" in invalid_args(arguments)


# -- delivery (docs/async-questions.md) ----------------------------------------------------

def test_the_schema_offers_delivery_wait_or_async_and_the_description_teaches_when(schema):
    delivery = schema["properties"]["delivery"]
    assert (delivery["enum"], delivery["default"]) == (["wait", "async"], "wait")
    description = AskUserQuestionTool().description
    assert "answer you do not need for your next step" in description
    assert '{"accepted": true, "ticket": "..."}' in description
    assert "user message naming the ticket" in description


@pytest.mark.parametrize("delivery", ["later", 1, True, ["async"]])
def test_a_delivery_other_than_wait_or_async_is_invalid_args(invalid_args, delivery):
    message = invalid_args({**DB_ARGS, "delivery": delivery})
    assert message.startswith("delivery: expected 'wait' or 'async'")


def test_delivery_null_or_wait_waits_for_the_answer(run):
    for delivery in (None, "wait"):
        result, requests = ask_tool(run, {**DB_ARGS, "delivery": delivery}, skip("db"))
        assert json.loads(result.content) == {"answers": [{"id": "db", "selected": []}]}
        assert len(requests) == 1


def test_async_validates_first_then_returns_a_ticket_at_once(run):
    result, _ = ask_tool(run, {"questions": [], "delivery": "async"})
    assert result.error["code"] == "EMPTY_QUESTIONS"  # no ticket for a batch that is refused
    result, _ = ask_tool(run, {**DB_ARGS, "delivery": "async"}, skip("db"))
    assert result.error is None
    accepted = json.loads(result.content)
    assert accepted["accepted"] is True and accepted["ticket"].startswith("q_")


def test_a_submit_hook_takes_async_batches_and_its_description_names_the_fetch(run):
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.tools.ask_user_question import MCP_DESCRIPTION, decode_call

    submitted = []

    def submit(request, ctx):
        submitted.append((request.questions[0].id, ctx.rpc_id))
        return "q_0123456789abcdef"

    tool = AskUserQuestionTool(submit=submit, description=MCP_DESCRIPTION)
    ctx = ToolContext(user_interaction=UserInteraction(), rpc_id="q_0123456789abcdef")
    text = run(tool.run(decode_call({**DB_ARGS, "delivery": "async"}), ctx))
    assert json.loads(text) == {"accepted": True, "ticket": "q_0123456789abcdef"}
    assert submitted == [("db", "q_0123456789abcdef")]  # even with an rpc_id given
    assert "get_user_answer" in tool.description
    assert "get_user_answer" not in AskUserQuestionTool().description
