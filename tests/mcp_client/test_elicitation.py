"""The elicitation mapping table (``spec/mcp.md`` section 3), property by property."""

from __future__ import annotations

import asyncio

import pytest
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams, ErrorData

from dsh_cli.core.errors import (
    ASK_CANCELLED,
    ASK_DECLINED,
    ASK_TIMEOUT,
    INVALID_ANSWER,
    UserInteractionError,
)
from dsh_cli.interaction import AskUserQuestionAnswer, ScriptedProvider, UserInteraction
from dsh_cli.mcp_client.forms.asking import Elicitor
from dsh_cli.mcp_client.forms.elicitation import (
    INVALID_PARAMS,
    SECRET_WARNING,
    SchemaRefused,
    batch_json,
    form_content,
    form_fields,
)
from dsh_cli.mcp_client.forms.url_mode import consent_question, open_page, parse_page

EVERY_TYPE = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "as on the badge",
                 "minLength": 2, "maxLength": 20},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "ratio": {"type": "number", "maximum": 1},
        "ok": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"},
                                              {"const": "l", "title": "Large"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]},
                 "minItems": 1, "maxItems": 2, "default": ["b"]},
        "picks": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"},
                                                       {"const": "y", "title": "Why"}]}},
    },
    "required": ["name", "color"],
}


def answer(*items: dict) -> AskUserQuestionAnswer:
    return AskUserQuestionAnswer.model_validate({"answers": list(items)})


def test_every_property_type_becomes_its_question():
    fields = {field.key: field.question for field in form_fields(EVERY_TYPE)}
    assert fields["name"] == {"id": "name", "question": "Your name", "detail": "as on the badge",
                              "required": True,
                              "rule": {"kind": "string", "min_length": 2, "max_length": 20}}
    assert fields["email"]["rule"] == {"kind": "string", "format": "email"}
    assert fields["age"]["rule"] == {"kind": "integer", "minimum": 0.0, "maximum": 150.0}
    assert fields["age"]["default"] == {"custom": "30"}
    assert fields["ratio"]["rule"] == {"kind": "number", "maximum": 1.0}
    assert fields["ok"]["options"] == [{"label": "Yes"}, {"label": "No"}]
    assert fields["ok"]["other"] is False and fields["ok"]["default"] == {"selected": ["Yes"]}
    assert [o["label"] for o in fields["color"]["options"]] == ["Red", "Green"]
    assert fields["color"]["other"] is False and fields["color"]["required"] is True
    assert [o["label"] for o in fields["size"]["options"]] == ["Small", "Large"]
    assert fields["tags"]["multi_select"] is True and fields["tags"]["other"] is False
    assert (fields["tags"]["min_items"], fields["tags"]["max_items"]) == (1, 2)
    assert fields["tags"]["default"] == {"selected": ["b"]}
    assert [o["label"] for o in fields["picks"]["options"]] == ["Ex", "Why"]


def test_answers_become_typed_content_and_skips_take_defaults():
    fields = form_fields(EVERY_TYPE)
    content = form_content(fields, answer(
        {"id": "name", "custom": "Ada"}, {"id": "email", "custom": "ada@example.com"},
        {"id": "age"}, {"id": "ratio", "custom": "0.5"}, {"id": "ok", "selected": ["No"]},
        {"id": "color", "selected": ["Green"]}, {"id": "size", "selected": ["Large"]},
        {"id": "tags"}, {"id": "picks", "selected": ["Ex", "Why"]}))
    assert content == {"name": "Ada", "email": "ada@example.com", "age": 30, "ratio": 0.5,
                       "ok": False, "color": "g", "size": "l", "tags": ["b"],
                       "picks": ["x", "y"]}


def test_a_skipped_optional_property_without_default_is_left_out():
    fields = form_fields({"type": "object", "properties": {"note": {"type": "string"}}})
    assert form_content(fields, answer({"id": "note"})) == {}


def test_choices_that_are_not_strings_read_as_json_and_come_back_typed():
    fields = form_fields({"type": "object", "properties": {
        "level": {"enum": [1, 2.5, True, None]},
        "mode": {"oneOf": [{"const": False}, {"const": "auto", "title": "Automatic"}]}}})
    labels = {field.key: [option["label"] for option in field.question["options"]]
              for field in fields}
    assert labels == {"level": ["1", "2.5", "true", "null"], "mode": ["false", "Automatic"]}
    assert form_content(fields, answer({"id": "level", "selected": ["true"]},
                                       {"id": "mode", "selected": ["false"]})) == {
        "level": True, "mode": False}


@pytest.mark.parametrize(("reply", "reason"), [
    ({"id": "name", "custom": "A"}, "name: at least 2 characters"),
    ({"id": "name"}, "name: an answer is required"),
])
def test_values_no_rule_let_through_are_refused_not_sent(reply, reason):
    fields = form_fields(EVERY_TYPE)[:1]
    with pytest.raises(UserInteractionError) as caught:
        form_content(fields, answer(reply))
    assert caught.value.code == INVALID_ANSWER and caught.value.message == reason


@pytest.mark.parametrize(("schema", "path"), [
    ({"type": "object", "properties": {"home": {"type": "object", "properties": {}}}},
     "properties.home"),
    ({"type": "object", "properties": {"x": {"type": "array", "items": {"type": "string"}}}},
     "properties.x.items"),
    ({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}}, "properties.x"),
    ({"type": "object", "properties": {"x": {"type": "string", "enum": ["a", "a"]}}},
     "properties.x"),
    ({"type": "array"}, "requestedSchema"),
    ({"type": "object", "properties": {}}, "requestedSchema.properties"),
    ({"type": "object", "properties": {"n": {"type": "integer", "minimum": "1"}}},
     "properties.n.minimum"),
])
def test_what_cannot_be_asked_is_refused_whole(schema, path):
    with pytest.raises(SchemaRefused) as caught:
        form_fields(schema)
    assert caught.value.path == path


def test_a_default_that_fits_nothing_is_dropped():
    fields = form_fields({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 5, "default": 1},
        "c": {"type": "string", "enum": ["a"], "default": "z"}}})
    assert all("default" not in field.question for field in fields)


def test_secret_looking_names_get_the_warning():
    schema = {"type": "object", "properties": {
        "password": {"type": "string"}, "gh": {"type": "string", "title": "GitHub API key"},
        "Access_Token": {"type": "string"}, "client_secret": {"type": "string"},
        "city": {"type": "string"}}}
    warned = [f.key for f in form_fields(schema) if f.question.get("warning") == SECRET_WARNING]
    assert warned == ["password", "gh", "Access_Token", "client_secret"]


def test_several_requests_prefix_their_ids_and_the_batch_names_the_server():
    fields = form_fields(EVERY_TYPE, "deploy:target")
    assert fields[0].id == "deploy:target/name" and fields[0].key == "name"
    batch = batch_json("git", "git asks:\nwhich   branch?", [fields[0].question])
    assert batch["source"] == {"name": "git", "message": "git asks: which branch?",
                               "kind": "elicitation"}
    assert batch["declinable"] is True and batch["review"] is True


def test_the_url_consent_shows_the_host_and_flags_punycode():
    page = parse_page("https://user@Example.COM:8443/a?b")
    assert (page.href, page.host, page.reads_as) == ("https://user@example.com:8443/a?b",
                                                     "example.com", None)
    page = parse_page("https://xn--pple-43d.com/login")
    assert page.host == "xn--pple-43d.com" and page.reads_as == "аpple.com"
    question = consent_question("open", page, "Sign in")
    assert [o["label"] for o in question["options"]] == ["Open", "Decline"]
    assert question["other"] is False and "xn--pple-43d.com" in question["warning"]
    assert "URL:  https://xn--pple-43d.com/login" in question["detail"]
    assert "host: >>> xn--pple-43d.com <<<" in question["detail"]
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "https://", "not a url",
                "https://a.example/" + "x" * 3000):
        with pytest.raises(SchemaRefused):
            parse_page(bad)


def elicitor_with(reply, opened=None):
    ui = UserInteraction()
    provider = ScriptedProvider([reply])
    ui.register_provider(provider)
    return Elicitor("auth", ui, open_url=(opened.append if opened is not None else print)), \
        provider


def test_url_mode_open_launches_and_accepts_decline_declines(run):
    params = ElicitRequestURLParams(message="Sign in to continue",
                                    url="https://auth.example.com/x", elicitation_id="e1")

    async def go(label):
        opened: list[str] = []
        elicitor, provider = elicitor_with({"answers": [{"id": "open", "selected": [label]}]},
                                           opened)
        result = await elicitor(None, params)
        return result.action, opened, provider.requests[0].questions[0].id

    assert run(go("Open")) == ("accept", ["https://auth.example.com/x"], "open")
    assert run(go("Decline")) == ("decline", [], "open")


def test_a_url_with_hidden_characters_is_shown_and_opened_the_same(run):
    """A bidi override or a zero-width space would be stripped from what the human reads
    but not from what the browser opens: both get them percent-encoded."""
    hidden = "https://auth.example.com/\u202eexe.txt?next=a b\u200b"
    params = ElicitRequestURLParams(message="Sign in", url=hidden, elicitation_id="e1")

    async def go():
        opened: list[str] = []
        elicitor, provider = elicitor_with({"answers": [{"id": "open", "selected": ["Open"]}]},
                                           opened)
        await elicitor(None, params)
        return opened, provider.requests[0].questions[0].detail

    opened, detail = run(go())
    shown = "https://auth.example.com/%E2%80%AEexe.txt?next=a%20b%E2%80%8B"
    assert opened == [shown]
    assert f"URL:  {shown}" in detail


@pytest.mark.parametrize(("error", "action"), [
    (ASK_DECLINED, "decline"), (ASK_CANCELLED, "cancel"), (ASK_TIMEOUT, "cancel")])
def test_seam_outcomes_become_elicitation_actions(run, error, action):
    params = ElicitRequestFormParams(message="m", requested_schema=EVERY_TYPE)

    async def go():
        elicitor, _ = elicitor_with(UserInteractionError("no", error))
        return await elicitor(None, params)

    result = run(go())
    assert result.action == action and result.content is None


def test_a_refused_schema_answers_invalid_params_before_asking(run):
    params = ElicitRequestFormParams(message="m", requested_schema={
        "type": "object", "properties": {"home": {"type": "object"}}})

    async def go():
        elicitor, provider = elicitor_with({"answers": []})
        return await elicitor(None, params), provider.requests

    result, asked = run(go())
    assert isinstance(result, ErrorData) and result.code == INVALID_PARAMS == -32602
    assert "properties.home" in result.message and asked == []


def test_without_a_provider_the_capability_is_not_declared():
    assert not Elicitor("s", None).can_answer
    assert not Elicitor("s", UserInteraction()).can_answer
    ui = UserInteraction()
    ui.register_provider(ScriptedProvider())
    assert Elicitor("s", ui).can_answer
    assert asyncio.iscoroutinefunction(Elicitor("s", ui).__call__)


def test_open_launches_the_browser_only_when_told_there_is_a_display(monkeypatch):
    launched: list[str] = []
    said: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: launched.append(url) or True)
    assert open_page("https://a.example/x", launch=True, say=said.append) is True
    assert open_page("https://a.example/y", launch=False, say=said.append) is False
    assert launched == ["https://a.example/x"]
    assert said == ["open this URL in a browser: https://a.example/y"]


def test_a_call_that_ends_while_its_question_is_out_leaves_its_timeout_alone(run):
    # session era: the question is asked on the SDK's receive task, so the call can end
    # first (ctrl-c in dsh run); resuming its finished timeout then raised RuntimeError
    from dsh_cli.tools.registry import ToolContext

    async def go():
        elicitor = Elicitor("s", UserInteraction())
        asking, answered = asyncio.Event(), asyncio.Event()

        async def ask(call):
            with call.paused():
                asking.set()
                await answered.wait()

        async with asyncio.timeout(30) as deadline:
            with elicitor.calling(ToolContext(user_interaction=UserInteraction()),
                                  deadline) as call:
                question = asyncio.create_task(ask(call))
                await asking.wait()
                assert deadline.when() is None  # paused while the human is asked
        answered.set()
        await question

    run(go())


def test_a_long_description_and_a_blank_default_are_still_asked(run):
    # a 5,000-character description and ``default: ""`` are ordinary schemas: once they
    # made the seam refuse the batch, and the server got a "cancel" no one had chosen
    params = ElicitRequestFormParams(message="m", requested_schema={
        "type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "title": "Name", "description": "word " * 1000},
            "note": {"type": "string", "default": ""}}})

    async def go():
        elicitor, provider = elicitor_with(
            {"answers": [{"id": "name", "custom": "acme"}, {"id": "note", "selected": []}]})
        return await elicitor(None, params), provider.requests

    result, asked = run(go())
    assert result.action == "accept" and result.content == {"name": "acme"}
    detail = asked[0].questions[0].detail
    assert len(detail) <= 4000 and detail.startswith("word word")
    kept, mark = detail.split("…")
    assert mark == f" ({5000 - len(kept)} more characters not shown)"
    assert asked[0].questions[1].default is None and not asked[0].questions[1].required


def test_a_long_message_is_still_asked_with_its_cut_marked(run):
    params = ElicitRequestFormParams(message="please " * 1000, requested_schema={
        "type": "object", "properties": {"name": {"type": "string"}}})

    async def go():
        elicitor, provider = elicitor_with({"answers": [{"id": "name", "custom": "acme"}]})
        return await elicitor(None, params), provider.requests

    result, asked = run(go())
    assert result.action == "accept" and result.content == {"name": "acme"}
    message = asked[0].source.message
    kept, mark = message.split("…")
    assert len(message) <= 4000 and kept.startswith("please please")
    assert mark == f" ({len('please ' * 1000) - 1 - len(kept)} more characters not shown)"


def test_a_batch_the_seam_refuses_answers_invalid_params_not_cancel(run):
    params = ElicitRequestFormParams(message="m", requested_schema={
        "type": "object", "properties": {f"f{n}": {"type": "string"} for n in range(21)}})

    async def go():
        elicitor, _ = elicitor_with({"answers": []})
        return await elicitor(None, params)

    result = run(go())
    assert isinstance(result, ErrorData) and result.code == INVALID_PARAMS
    assert "at most 20 questions" in result.message


def test_hidden_characters_are_read_as_the_browser_reads_them_and_a_lone_surrogate_too():
    # the standard drops a zero-width space from a host and percent-encodes the path
    assert parse_page("https://exa\u200bmple.com/login").href == "https://example.com/login"
    assert parse_page("https://a.example/\ud800x").href == "https://a.example/%EF%BF%BDx"
