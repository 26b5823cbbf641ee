"""The plain line provider: every input form and every bad line, from piped input."""

from __future__ import annotations

import asyncio
import io
import os

import pytest

from dsh_cli.interaction import (
    ASK_ABORTED,
    ASK_CANCELLED,
    AskUserQuestionRequest,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.providers.plain import PROMPT_TEXT, PROMPT_WITH_OPTIONS, PlainProvider, parse_numbers

FEATURES = {
    "id": "features",
    "header": "Features",
    "question": "Which features should the starter include?",
    "multi_select": True,
    "options": [
        {"label": "Auth", "description": "Sign-in with OAuth"},
        {"label": "Billing"},
        {"label": "Admin UI (Recommended)"},
    ],
}
DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}
NAME = {"id": "name", "question": "Project name?"}


def request(*questions):
    return AskUserQuestionRequest.model_validate({"questions": list(questions)})


def ask(lines, *questions):
    """Ask through the real seam with ``lines`` piped in; (answer or error, transcript)."""
    output = io.StringIO()
    provider = PlainProvider(io.StringIO("".join(line + "\n" for line in lines)), output)

    async def go():
        ui = UserInteraction()
        ui.register_provider(provider)
        try:
            return (await ui.ask(request(*questions))).to_json()
        except UserInteractionError as error:
            return error

    return asyncio.run(go()), output.getvalue()


def test_prints_the_question_block_of_the_spec():
    _, transcript = ask(["1"], FEATURES)
    assert transcript.startswith(
        "[Features] Which features should the starter include? (several allowed)\n"
        "  1. Auth — Sign-in with OAuth\n"
        "  2. Billing\n"
        "  3. Admin UI (Recommended)\n"
        "answer (numbers, text for Other, /skip, /back, /cancel)> "
    )


def test_single_number_picks_that_option():
    answer, _ = ask(["2"], DB)
    assert answer == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_multi_select_numbers_with_commas_and_spaces_duplicates_dropped():
    answer, _ = ask(["3 1 1, 3"], FEATURES)
    assert answer == {"answers": [
        {"id": "features", "selected": ["Auth", "Admin UI (Recommended)"]}]}


def test_other_text_is_custom_and_trimmed():
    answer, _ = ask(["  MariaDB 11  "], DB)
    assert answer == {"answers": [{"id": "db", "selected": [], "custom": "MariaDB 11"}]}


def test_optionless_question_takes_any_text_even_digits():
    answer, transcript = ask(["42"], NAME)
    assert answer == {"answers": [{"id": "name", "selected": [], "custom": "42"}]}
    assert PROMPT_TEXT in transcript


def test_skip_back_and_batch_submits_after_last_question():
    answer, transcript = ask(["1", "/back", "/skip", "acme"], DB, NAME)
    assert answer == {"answers": [{"id": "db", "selected": []},
                                  {"id": "name", "selected": [], "custom": "acme"}]}
    assert transcript.count("Which database?") == 2
    assert "review" not in transcript.lower()


def test_commands_are_case_insensitive():
    answer, _ = ask(["/SKIP"], DB)
    assert answer == {"answers": [{"id": "db", "selected": []}]}


def test_cancel_raises_ask_cancelled():
    error, _ = ask(["/cancel"], DB, NAME)
    assert isinstance(error, UserInteractionError) and error.code == ASK_CANCELLED


def test_end_of_input_before_the_batch_is_complete_aborts():
    error, transcript = ask(["1"], DB, NAME)
    assert isinstance(error, UserInteractionError)
    assert (error.code, error.message) == (ASK_ABORTED, "input closed")
    assert transcript.endswith("\n")


@pytest.mark.parametrize(("bad", "hint"), [
    ("", "type a number, text for Other, /skip, /back or /cancel"),
    ("   ", "type a number, text for Other, /skip, /back or /cancel"),
    (" , ,", "type a number, text for Other, /skip, /back or /cancel"),
    ("3", "there is no option 3: choose 1-2, or type text for Other"),
    ("0", "there is no option 0: choose 1-2, or type text for Other"),
    ("1 2", "this question takes one answer: type a single number"),
    ("1,2", "this question takes one answer: type a single number"),
    ("/back", "this is the first question; answer it, /skip or /cancel"),
])
def test_bad_line_prints_one_hint_and_asks_again(bad, hint):
    answer, transcript = ask([bad, "1"], DB)
    assert answer == {"answers": [{"id": "db", "selected": ["PostgreSQL"]}]}
    assert f"  {hint}\n" in transcript
    assert transcript.count(PROMPT_WITH_OPTIONS) == 2
    assert transcript.count("Which database?") == 1


def test_empty_line_on_optionless_question_hints_text():
    answer, transcript = ask(["", "acme"], NAME)
    assert answer["answers"][0]["custom"] == "acme"
    assert "  type your answer, /skip, /back or /cancel\n" in transcript


def test_multi_select_out_of_range_number_hints():
    _, transcript = ask(["1, 4", "1"], FEATURES)
    assert "there is no option 4: choose 1-3" in transcript


def test_model_text_is_sanitised_and_no_escape_reaches_output():
    hostile = {"id": "x", "question": "Pick\x1b]0;title\x07 one\u202e\x1b[2J",
               "detail": "red\x1b[31m text",
               "options": [{"label": "ok", "description": "d\x9b1mx"}]}
    answer, transcript = ask(["1"], hostile)
    assert answer == {"answers": [{"id": "x", "selected": ["ok"]}]}
    assert "\x1b" not in transcript and "\x9b" not in transcript and "\u202e" not in transcript
    assert transcript.startswith("Pick one\n  red text\n  1. ok — dx\n")


def test_detail_is_printed_indented_below_the_question():
    _, transcript = ask(["1"], {**DB, "detail": "Used for storage.\nPick one."})
    assert transcript.startswith(
        "Which database?\n  Used for storage.\n  Pick one.\n  1. PostgreSQL")


def test_consecutive_batches_share_one_input():
    output = io.StringIO()
    provider = PlainProvider(io.StringIO("2\nacme\n"), output)

    async def go():
        ui = UserInteraction()
        ui.register_provider(provider)
        first = await ui.ask(request(DB))
        second = await ui.ask(request(NAME))
        return first.to_json(), second.to_json()

    first, second = asyncio.run(go())
    assert first["answers"][0]["selected"] == ["SQLite"]
    assert second["answers"][0]["custom"] == "acme"


def test_reads_a_real_pipe_without_blocking_the_loop():
    read_end, write_end = os.pipe()
    output = io.StringIO()

    async def go():
        ui = UserInteraction()
        ui.register_provider(PlainProvider(os.fdopen(read_end, "rb", buffering=0), output))
        task = asyncio.create_task(ui.ask(request(FEATURES)))
        for _ in range(200):  # the loop stays free while the reader thread waits
            await asyncio.sleep(0.005)
            if PROMPT_WITH_OPTIONS in output.getvalue():
                break
        os.write(write_end, b"2,3\r\n")
        answer = await asyncio.wait_for(task, 5)
        os.close(write_end)
        return answer.to_json()

    assert asyncio.run(go()) == {
        "answers": [{"id": "features", "selected": ["Billing", "Admin UI (Recommended)"]}]
    }


def test_timeout_settles_while_waiting_and_closes_the_prompt_line():
    read_end, write_end = os.pipe()
    output = io.StringIO()

    async def go():
        ui = UserInteraction(timeout=0.05)
        ui.register_provider(PlainProvider(os.fdopen(read_end, "rb", buffering=0), output))
        try:
            await ui.ask(request(DB))
        except UserInteractionError as error:
            return error.code
        finally:
            os.close(write_end)

    assert asyncio.run(go()) == "ASK_TIMEOUT"
    transcript = output.getvalue()
    assert "(answer within 0.05 seconds)" in transcript
    assert transcript.endswith(PROMPT_WITH_OPTIONS + "\n")


def test_one_second_is_said_in_the_singular():
    read_end, write_end = os.pipe()
    output = io.StringIO()
    os.write(write_end, b"1\n")

    async def go():
        ui = UserInteraction(timeout=1)
        ui.register_provider(PlainProvider(os.fdopen(read_end, "rb", buffering=0), output))
        try:
            return await ui.ask(request(DB))
        finally:
            os.close(write_end)

    asyncio.run(go())
    assert "(answer within 1 second)\n" in output.getvalue()


@pytest.mark.parametrize(("line", "numbers"), [
    ("1", [1]), ("1 1, 3", [1, 3]), ("3,1", [3, 1]), (" 2 ,, 2 ", [2]),
    ("1a", None), ("one", None), (",", None), ("-1", None),
])
def test_parse_numbers(line, numbers):
    assert parse_numbers(line) == numbers


def test_piped_answers_are_echoed_so_each_hint_starts_its_own_line():
    _, transcript = ask(["", "/cancel"], DB)
    assert transcript.endswith(
        PROMPT_WITH_OPTIONS + "\n"
        "  type a number, text for Other, /skip, /back or /cancel\n"
        + PROMPT_WITH_OPTIONS + "/cancel\n"
    )


def test_terminal_input_is_not_echoed_again():
    main_fd, terminal_fd = os.openpty()
    output = io.StringIO()

    async def go():
        ui = UserInteraction()
        ui.register_provider(PlainProvider(os.fdopen(terminal_fd, "rb", buffering=0), output))
        task = asyncio.create_task(ui.ask(request(DB)))
        await asyncio.sleep(0.05)
        os.write(main_fd, b"2\n")
        return (await asyncio.wait_for(task, 5)).to_json()

    try:
        assert asyncio.run(go())["answers"][0]["selected"] == ["SQLite"]
    finally:
        os.close(main_fd)
    assert output.getvalue().endswith(PROMPT_WITH_OPTIONS)


def test_two_forms_in_one_batch_each_head_their_questions_with_their_own_message():
    from dsh_cli.mcp_client.forms.elicitation import build_request

    batch = build_request("deploy", "Where should it go? · Approve the deploy?",
                          [DB, NAME], messages={"db": "Where should it go?",
                                                "name": "Approve the deploy?"})
    output = io.StringIO()
    provider = PlainProvider(io.StringIO("1\nacme\n\n"), output)

    async def go():
        ui = UserInteraction()
        ui.register_provider(provider)
        return (await ui.ask(batch)).to_json()

    asyncio.run(go())
    text = output.getvalue()
    first = text.index("── deploy asks: Where should it go?\n")
    second = text.index("── deploy asks: Approve the deploy?\n")
    assert first < text.index("Which database?") < second < text.index("Project name?")
    assert "Where should it go? · Approve" not in text
