"""The plain provider with an asker's fields: heading, /decline, no Other, re-ask, default."""

from __future__ import annotations

import asyncio
import io

from fakes.elicitation_form import ENV, REPLICAS

from dsh_cli.interaction import (
    ASK_DECLINED,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.providers.plain import PlainProvider

TOKEN = {"id": "token", "question": "Token?", "warning": "servers must not ask for secrets"}
SOURCE = {"name": "deploy", "message": "Configure the rollout"}


def ask(lines, *questions, **fields):
    """Ask through the real seam with ``lines`` piped in; (answer or error, transcript)."""
    output = io.StringIO()
    provider = PlainProvider(io.StringIO("".join(line + "\n" for line in lines)), output)
    request = AskUserQuestionRequest.model_validate(
        {"questions": list(questions), "source": SOURCE, **fields})

    async def go():
        ui = UserInteraction()
        ui.register_provider(provider)
        try:
            return (await ui.ask(request)).to_json()
        except UserInteractionError as error:
            return error

    return asyncio.run(go()), output.getvalue()


def test_the_heading_names_who_asks_and_the_prompt_offers_only_what_fits():
    _, transcript = ask(["1"], ENV, declinable=True)
    assert transcript.startswith("── deploy asks: Configure the rollout\nEnvironment?\n")
    assert "  (required)\n" in transcript
    assert "answer (numbers, /back, /cancel, /decline)> " in transcript
    assert "text for Other" not in transcript and "/skip" not in transcript


def test_decline_ends_the_batch_as_declined_only_when_offered():
    declined, _ = ask(["/decline"], ENV, declinable=True)
    assert isinstance(declined, UserInteractionError) and declined.code == ASK_DECLINED
    answer, transcript = ask(["/decline", "2"], ENV)  # not offered: it is just text
    assert answer == {"answers": [{"id": "env", "selected": ["production"]}]}
    assert "  type a number: choose 1-2\n" in transcript


def test_text_skip_and_bad_values_are_asked_again_with_the_reason():
    answer, transcript = ask(["qa", "/skip", "1", "zero", "12", "4"], ENV, REPLICAS)
    assert answer == {"answers": [{"id": "env", "selected": ["staging"]},
                                  {"id": "replicas", "selected": [], "custom": "4"}]}
    assert "  type a number: choose 1-2\n" in transcript
    assert "  this question is required: it cannot be skipped\n" in transcript
    assert "  expected a whole number\n" in transcript
    assert "  expected at most 9\n" in transcript
    assert "  (expects a whole number from 1 to 9)\n" in transcript


def test_the_default_is_shown_and_used_on_skip_and_the_warning_is_shown():
    answer, transcript = ask(["/skip", "/skip"], REPLICAS, TOKEN)
    assert answer == {"answers": [{"id": "replicas", "selected": [], "custom": "3"},
                                  {"id": "token", "selected": []}]}
    assert "  (default: 3; /skip uses it)\n" in transcript
    assert "  using the default: 3\n" in transcript
    assert "Token?\n  ! servers must not ask for secrets\n" in transcript


def test_a_reviewed_batch_ends_on_a_review_that_can_change_an_answer():
    answer, transcript = ask(["1", "/skip", "2", "7", ""], ENV, REPLICAS,
                             declinable=True, review=True)
    assert answer == {"answers": [{"id": "env", "selected": ["staging"]},
                                  {"id": "replicas", "selected": [], "custom": "7"}]}
    first, second = transcript.split("Review your answers:\n")[1:]
    assert first.startswith("  1. Environment?: staging\n"
                            "  2. Replicas?: skipped (default: 3)\n"
                            "review (enter to submit, a number to change, /back, /cancel, "
                            "/decline)> 2\nReplicas?\n")  # 2 changes the second answer only
    assert second.startswith("  1. Environment?: staging\n  2. Replicas?: 7\n")


def test_the_review_declines_cancels_and_end_of_input_aborts():
    declined, _ = ask(["1", "/skip", "/decline"], ENV, REPLICAS, declinable=True, review=True)
    assert isinstance(declined, UserInteractionError) and declined.code == ASK_DECLINED
    cancelled, _ = ask(["1", "/skip", "/cancel"], ENV, REPLICAS, review=True)
    assert isinstance(cancelled, UserInteractionError) and cancelled.code == "ASK_CANCELLED"
    aborted, transcript = ask(["1"], ENV, review=True)  # one question is reviewed too
    assert isinstance(aborted, UserInteractionError) and aborted.code == "ASK_ABORTED"
    assert "Review your answers:\n  1. Environment?: staging\n" in transcript
    assert "/decline" not in transcript  # not offered: not on the prompt


def test_the_review_takes_back_to_the_last_question_and_submit_submits():
    answer, transcript = ask(["1", "/skip", "/back", "5", "/submit"], ENV, REPLICAS,
                             review=True)
    assert answer == {"answers": [{"id": "env", "selected": ["staging"]},
                                  {"id": "replicas", "selected": [], "custom": "5"}]}
    first, second = transcript.split("Review your answers:\n")[1:]
    assert "> /back\nReplicas?\n" in first  # /back: the last question again
    assert second.startswith("  1. Environment?: staging\n  2. Replicas?: 5\n")


def test_the_review_shows_a_note_with_its_answer():
    answer, transcript = ask(["/note before friday", "1", "/skip", ""], ENV, REPLICAS,
                             review=True)
    assert answer["answers"][0] == {"id": "env", "selected": ["staging"],
                                    "note": "before friday"}
    assert "  1. Environment?: staging (note: before friday)\n" in transcript
