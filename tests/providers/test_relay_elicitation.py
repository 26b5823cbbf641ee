"""The relay with an asker's fields: what ``question/requested`` carries, ``question/decline``."""

from __future__ import annotations

import asyncio

from harness.relay_wire import SESSION, answer, outcome, run

from dsh_cli.interaction import AskUserQuestionRequest

FORM = {
    "questions": [
        {"id": "env", "question": "Environment?", "other": False, "required": True,
         "options": [{"label": "staging"}, {"label": "production"}]},
        {"id": "replicas", "question": "Replicas?", "default": {"custom": "3"},
         "rule": {"kind": "integer", "minimum": 1}},
        {"id": "tags", "question": "Tags?", "multi_select": True, "min_items": 1,
         "max_items": 2, "options": [{"label": "a"}, {"label": "b"}, {"label": "c"}]},
        {"id": "token", "question": "Token?", "warning": "servers must not ask for secrets"},
    ],
    "source": {"name": "deploy", "message": "Configure"},
    "declinable": True,
}


def ask_form(ui, **change):
    request = AskUserQuestionRequest.model_validate({**FORM, **change})
    return asyncio.create_task(ui.ask(request))


def test_question_requested_carries_source_and_every_question_field():
    async def scenario(ui, relay, wire):
        task = ask_form(ui)
        [requested] = await wire.wait_for("question/requested")
        wire.send({"type": "question/cancel", "rpc_id": requested["rpc_id"],
                   "session_id": SESSION})
        await outcome(task)
        return requested

    requested, _ = run(scenario)
    assert requested["source"] == {"name": "deploy", "message": "Configure",
                                   "kind": "elicitation"}
    assert requested["declinable"] is True and "review" not in requested
    env, replicas, tags, token = requested["questions"]
    assert (env["other"], env["required"]) == (False, True)
    assert replicas["default"] == {"selected": [], "custom": "3"}
    assert replicas["rule"] == {"kind": "integer", "minimum": 1.0}
    assert (tags["min_items"], tags["max_items"]) == (1, 2)
    assert token["warning"] == "servers must not ask for secrets"


def test_a_decline_frame_is_acked_and_resolved_as_declined():
    async def scenario(ui, relay, wire):
        task = ask_form(ui)
        [requested] = await wire.wait_for("question/requested")
        rpc_id = requested["rpc_id"]
        wire.send({"type": "question/decline", "rpc_id": rpc_id, "session_id": SESSION})
        result = await outcome(task)
        await wire.wait_for("question/resolved")
        return rpc_id, result

    (rpc_id, result), wire = run(scenario)
    assert result == ("ASK_DECLINED", "the user declined the questions")
    assert wire.of("response/ack") == [{"type": "response/ack", "rpc_id": rpc_id,
                                        "accepted": True}]
    assert wire.of("question/resolved") == [{"type": "question/resolved", "rpc_id": rpc_id,
                                             "outcome": "declined"}]


def test_a_decline_of_a_batch_that_does_not_offer_it_is_refused():
    async def scenario(ui, relay, wire):
        task = ask_form(ui, declinable=False)
        [requested] = await wire.wait_for("question/requested")
        rpc_id = requested["rpc_id"]
        wire.send({"type": "question/decline", "rpc_id": rpc_id, "session_id": SESSION})
        [ack] = await wire.wait_for("response/ack")
        wire.send({"type": "question/cancel", "rpc_id": rpc_id, "session_id": SESSION})
        await outcome(task)
        return ack

    ack, _ = run(scenario)
    assert (ack["accepted"], ack["reason"]) == (False, "bad-response")


def test_an_answer_that_breaks_a_rule_is_bad_response_and_the_batch_stays_pending():
    async def scenario(ui, relay, wire):
        task = ask_form(ui)
        [requested] = await wire.wait_for("question/requested")
        rpc_id = requested["rpc_id"]
        wire.send(answer(rpc_id, [{"id": "env"}, {"id": "replicas", "custom": "zero"},
                                  {"id": "tags", "selected": ["a"]}, {"id": "token"}]))
        await wire.wait_for("response/ack")
        wire.send(answer(rpc_id, [{"id": "env", "selected": ["staging"]}, {"id": "replicas"},
                                  {"id": "tags", "selected": ["a"]}, {"id": "token"}]))
        return await outcome(task)

    result, wire = run(scenario)
    first, second = wire.of("response/ack")
    assert (first["accepted"], first["reason"]) == (False, "bad-response")
    # every bad answer of the frame at once, so a controller fixes them in one go
    assert first["message"] == ("answers[0]: this question is required: it cannot be skipped; "
                                "answers[1].custom: expected a whole number")
    assert second["accepted"] is True
    assert result["answers"][1] == {"id": "replicas", "selected": [], "custom": "3"}
