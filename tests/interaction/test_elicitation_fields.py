"""The elicitation fields of the vocabulary: the seam's answer rules, decline, the store.

``other``, ``required``, ``default``, ``rule``, ``min_items``/``max_items`` and ``warning``
per question, and ``source``, ``declinable`` and ``review`` per batch (``mcp.md`` section 3)
are set by askers inside dsh; a model cannot set them.
"""

from __future__ import annotations

import asyncio

import pytest
from fakes.elicitation_form import ENV, REPLICAS

from dsh_cli.core.events import EventStream, QuestionRequested, QuestionResolved
from dsh_cli.core.outcomes import Outcome
from dsh_cli.interaction import (
    ASK_DECLINED,
    BAD_RESPONSE,
    INVALID_ANSWER,
    INVALID_QUESTIONS,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
    check_questions,
    problem_with,
    validate_answer,
)
from dsh_cli.store import SessionStore
from dsh_cli.tools.ask_user_question import PARAMETERS, decode_questions

TAGS = {"id": "tags", "question": "Tags?", "multi_select": True, "other": False,
        "min_items": 1, "max_items": 2,
        "options": [{"label": "a"}, {"label": "b"}, {"label": "c"}]}
TOKEN = {"id": "token", "question": "API token?", "warning": "servers must not ask for secrets"}
SOURCE = {"name": "git", "message": "Configure the deploy", "kind": "elicitation"}


def item(data):
    return AskUserQuestionItem.model_validate(data)


def answer(question_id, selected=(), custom=None):
    return AskUserQuestionAnswerItem(id=question_id, selected=list(selected), custom=custom)


def form(**fields):
    return AskUserQuestionRequest.model_validate(
        {"questions": [ENV, REPLICAS, TAGS, TOKEN], "source": SOURCE, **fields})


def test_custom_text_is_refused_where_other_is_false():
    assert problem_with(item(ENV), answer("env", custom="qa")) == \
        "this question takes one of its options, not custom text"
    assert problem_with(item(ENV), answer("env", ["staging"])) is None
    # without options the question is all text, whatever ``other`` says
    assert problem_with(item({"id": "n", "question": "Name?", "other": False}),
                        answer("n", custom="x")) is None


def test_a_required_question_cannot_be_skipped():
    assert problem_with(item(ENV), answer("env")) == \
        "this question is required: it cannot be skipped"
    with pytest.raises(UserInteractionError) as caught:
        validate_answer(form(), {"answers": [
            {"id": "env"}, {"id": "replicas"}, {"id": "tags", "selected": ["a"]},
            {"id": "token"}]})
    assert caught.value.code == INVALID_ANSWER
    assert caught.value.message == "answers[0]: this question is required: it cannot be skipped"


def test_a_skip_is_answered_with_the_default_by_the_seam():
    result = validate_answer(form(), {"answers": [
        {"id": "env", "selected": ["staging"]}, {"id": "replicas"},
        {"id": "tags", "selected": ["b"]}, {"id": "token"}]})
    assert result.to_json()["answers"][1] == {"id": "replicas", "selected": [], "custom": "3"}
    assert result.answers[3].skipped  # no default: a skip stays a skip


def test_typed_text_must_pass_the_rule():
    question = item(REPLICAS)
    assert problem_with(question, answer("replicas", custom="many")) == \
        "expected a whole number"
    assert problem_with(question, answer("replicas", custom="12")) == "expected at most 9"
    assert problem_with(question, answer("replicas", custom=" 4 ")) is None
    assert question.rule.value("4") == 4


def test_a_multi_select_is_counted_within_min_and_max_items():
    question = item(TAGS)
    assert problem_with(question, answer("tags", ["a", "b", "c"])) == \
        "choose at most 2 options"
    assert problem_with(question, answer("tags", ["a"])) is None
    low = item({**TAGS, "min_items": 2})
    assert problem_with(low, answer("tags", ["a"])) == "choose at least 2 options"


@pytest.mark.parametrize(("change", "path"), [
    ({"default": {"selected": ["qa"]}}, "questions[0].default.selected"),
    ({"default": {"custom": "qa"}}, "questions[0].default.custom"),
    ({"default": {}}, "questions[0].default"),
    ({"min_items": 3, "max_items": 1}, "questions[0].min_items"),
    ({"warning": "two\nlines"}, "questions[0].warning"),
])
def test_a_request_whose_own_fields_do_not_fit_is_invalid(change, path):
    request = AskUserQuestionRequest.model_validate({"questions": [{**ENV, **change}]})
    with pytest.raises(UserInteractionError) as caught:
        check_questions(request)
    assert caught.value.code == INVALID_QUESTIONS
    assert caught.value.message.startswith(path + ":")


def test_a_model_cannot_set_the_elicitation_fields():
    raw = {**ENV, **REPLICAS, "id": "x", "warning": "w", "min_items": 1, "max_items": 1}
    [decoded] = decode_questions({"questions": [raw]})
    assert (decoded.other, decoded.required, decoded.default, decoded.rule,
            decoded.min_items, decoded.max_items, decoded.warning) == (
        True, False, None, None, None, None, None)
    names = set(PARAMETERS["properties"]["questions"]["items"]["properties"])
    assert names.isdisjoint({"other", "required", "default", "rule", "warning"})


def test_question_requested_carries_the_fields_only_when_set(run):
    model = AskUserQuestionRequest.model_validate({"questions": [{"id": "q", "question": "Q?"}]})
    announced = []
    for request in (model, form(declinable=True, review=True)):
        _, _, seen = _shown(run, request, lambda ui, rpc_id: ui.pending.cancel(rpc_id, "s1"))
        announced += [e.to_json() for e in seen if isinstance(e, QuestionRequested)]
    plain, elicited = announced
    assert set(plain) == {"type", "rpc_id", "session_id", "call_id", "questions"}
    assert plain["questions"] == [{"id": "q", "question": "Q?", "multi_select": False}]
    assert elicited["source"] == SOURCE
    assert elicited["declinable"] is True and elicited["review"] is True
    env, replicas, tags, token = elicited["questions"]
    assert env["other"] is False and env["required"] is True
    assert replicas["default"] == {"selected": [], "custom": "3"}
    assert replicas["rule"] == {"kind": "integer", "minimum": 1.0, "maximum": 9.0}
    assert (tags["min_items"], tags["max_items"]) == (1, 2)
    assert token["warning"] == "servers must not ask for secrets"


class _Waiting:
    async def ask(self, context):
        await asyncio.get_running_loop().create_future()


def _shown(run, request, act):
    """Ask ``request``, call ``act(ui, rpc_id)`` once it is pending; (ack, error, events)."""
    async def main():
        ui = UserInteraction(session_id="s1")
        seen = []
        ui.events.subscribe(seen.append)
        ui.register_provider(_Waiting())
        task = asyncio.ensure_future(ui.ask(request))
        while not any(isinstance(e, QuestionRequested) for e in seen):
            await asyncio.sleep(0)
        rpc_id = seen[0].rpc_id
        ack = act(ui, rpc_id)
        if not ack.accepted:
            ui.pending.cancel(rpc_id, "s1")
        try:
            await task
        except UserInteractionError as error:
            return ack, error, seen
        return ack, None, seen

    return run(main())


def test_a_declinable_batch_is_declined_through_the_table(run):
    ack, error, seen = _shown(run, form(declinable=True),
                              lambda ui, rpc_id: ui.pending.decline(rpc_id, "s1"))
    assert ack.accepted
    assert error.code == ASK_DECLINED
    resolved = [e.to_json() for e in seen if isinstance(e, QuestionResolved)]
    assert [r["outcome"] for r in resolved] == ["declined"]


def test_a_batch_that_offers_no_decline_refuses_it_and_stays_pending(run):
    ack, error, _ = _shown(run, form(), lambda ui, rpc_id: ui.pending.decline(rpc_id, "s1"))
    assert (ack.accepted, ack.reason) == (False, BAD_RESPONSE)
    assert error.code == "ASK_CANCELLED"  # it was still pending: the cancel settled it


def test_a_response_that_breaks_a_rule_is_bad_response_and_stays_pending(run):
    def respond(ui, rpc_id):
        bad = ui.pending.respond(rpc_id, [{"id": "env", "custom": "qa"}, {"id": "replicas"},
                                          {"id": "tags", "selected": ["a"]}, {"id": "token"}],
                                 "s1")
        assert ui.pending.get(rpc_id) is not None
        return bad

    ack, _, _ = _shown(run, form(), respond)
    assert (ack.accepted, ack.reason) == (False, BAD_RESPONSE)
    assert "answers[0].custom: this question takes one of its options" in ack.message


def test_the_fields_survive_a_store_round_trip(tmp_path):
    request = form(declinable=True, review=True)
    with SessionStore.open(tmp_path / "s.db") as store:
        session_id = store.create_session("demo")
        events = EventStream()
        store.record(events, session_id)
        events.emit(QuestionRequested("rpc-1", session_id, "call-1", request.questions_json(),
                                      request.source_json(), True, True))
        events.emit(QuestionResolved("rpc-1", Outcome.DECLINED))
        [batch] = store.question_batches(session_id)
    assert batch.status == "declined"
    again = AskUserQuestionRequest.model_validate(batch.request)
    assert again.source == request.source
    assert (again.declinable, again.review) == (True, True)
    assert again.questions == request.questions
    assert again.questions[0].other is False and again.questions[0].required is True
    assert again.questions[1].rule == request.questions[1].rule
