"""The transcript renderer: each event's text, dim reasoning, tool lines, hostile text inert."""

from __future__ import annotations

import io
import json

from dsh_cli.core.events import (
    AssistantDelta,
    AssistantMessage,
    ErrorEvent,
    EventStream,
    QuestionRequested,
    QuestionResolved,
    ReasoningDelta,
    SessionStarted,
    ToolResultEvent,
    ToolStarted,
    TurnCompleted,
    UserMessage,
)
from dsh_cli.core.outcomes import Outcome
from dsh_cli.transcript import DIM, RESET, TranscriptRenderer, color_enabled


def render(*events, color=False):
    out = io.StringIO()
    renderer = TranscriptRenderer(out, color=color)
    for event in events:
        renderer(event)
    return out.getvalue()


def answers(*items):
    return json.dumps({"answers": list(items)})


def test_streamed_text_is_written_as_it_arrives_and_the_message_ends_the_line():
    out = io.StringIO()
    renderer = TranscriptRenderer(out, color=False)
    renderer(AssistantDelta("Hel"))
    assert out.getvalue() == "Hel"
    renderer(AssistantDelta("lo"))
    renderer(AssistantMessage("Hello"))
    assert out.getvalue() == "Hello\n"


def test_a_message_that_was_not_streamed_is_written_whole():
    assert render(AssistantMessage("whole reply")) == "whole reply\n"


def test_text_ending_in_a_newline_gets_no_blank_line():
    assert render(AssistantDelta("line\n"), AssistantMessage("line\n")) == "line\n"


def test_reasoning_is_dimmed_and_marked_then_text_starts_on_its_own_line():
    text = render(ReasoningDelta("think"), ReasoningDelta("ing\nmore"), AssistantDelta("Answer"),
                  AssistantMessage("Answer"), color=True)
    assert text == f"{DIM}┊ thinking\n┊ more{RESET}\nAnswer\n"


def test_reasoning_without_color_is_still_marked():
    text = render(ReasoningDelta("hmm"), AssistantDelta("ok"), AssistantMessage("ok"))
    assert text == "┊ hmm\nok\n"
    assert "\x1b" not in text


def test_reasoning_after_text_starts_a_new_line():
    assert render(AssistantDelta("a"), ReasoningDelta("b")) == "a\n┊ b"


def test_answered_questions_make_one_compact_line():
    event = ToolResultEvent("c1", "ask_user_question", answers(
        {"id": "a", "selected": ["x"]}, {"id": "b", "selected": [], "custom": "t"}))
    assert render(event) == "· ask_user_question → answered (2)\n"


def test_skipped_questions_are_counted():
    event = ToolResultEvent("c1", "ask_user_question", answers(
        {"id": "a", "selected": ["x"]}, {"id": "b", "selected": []}))
    assert render(event) == "· ask_user_question → answered (1) · skipped (1)\n"
    only_skips = ToolResultEvent("c1", "ask_user_question", answers({"id": "a", "selected": []}))
    assert render(only_skips) == "· ask_user_question → skipped (1)\n"


def test_a_failed_tool_shows_its_code():
    error = {"name": "UserInteractionError", "code": "ASK_CANCELLED", "message": "cancelled"}
    event = ToolResultEvent("c1", "ask_user_question", json.dumps({"error": error}), error)
    assert render(event) == "· ask_user_question ✗ ASK_CANCELLED\n"
    assert "\x1b[31m✗\x1b[0m" in render(event, color=True)


def test_a_failure_without_a_code_shows_the_error_name():
    error = {"name": "RuntimeError", "message": "boom"}
    assert render(ToolResultEvent("c", "shell", "{}", error)) == "· shell ✗ RuntimeError\n"


def test_other_tools_show_their_result_on_one_line_clipped():
    event = ToolResultEvent("c", "read_file", "first line\nsecond")
    assert render(event) == "· read_file → first line second (2 lines)\n"
    pretty = ToolResultEvent("c", "get_time", '{\n  "timezone": "UTC",\n  "hour": 9\n}')
    assert render(pretty) == '· get_time → { "timezone": "UTC", "hour": 9 } (4 lines)\n'
    long = render(ToolResultEvent("c", "read_file", "x" * 500))
    assert long == "· read_file → " + "x" * 59 + "…\n"


def test_a_tool_line_after_streamed_text_starts_on_its_own_line():
    text = render(AssistantDelta("Let me ask."),
                  ToolResultEvent("c", "ask_user_question", answers({"id": "a", "selected": []})))
    assert text == "Let me ask.\n· ask_user_question → skipped (1)\n"


def test_events_with_nothing_to_show_write_nothing():
    quiet = [
        SessionStarted("s1", "demo"),
        UserMessage("hi"),
        ToolStarted("c", "ask_user_question", "{}"),
        QuestionRequested("q_1", None, "c", [{"id": "a", "question": "?"}]),
        QuestionResolved("q_1", Outcome.ANSWERED, {"answers": []}),
        TurnCompleted("s1"),
    ]
    assert render(*quiet) == ""


def test_turn_completed_finishes_an_open_line():
    assert render(AssistantDelta("partial"), TurnCompleted(None)) == "partial\n"


def test_error_events_show_code_and_message():
    assert render(ErrorEvent("BAD_FRAME", "not JSON")) == "! BAD_FRAME: not JSON\n"


def test_hostile_model_text_is_inert():
    hostile = ("\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u202eevil\x9b31m\r\x08"
               "\x1b]8;;http://x\x1b\\link")
    text = render(AssistantDelta(hostile), ReasoningDelta(hostile), AssistantMessage(hostile))
    assert "\x1b" not in text and "\x9b" not in text and "\r" not in text
    assert "\u202e" not in text and "\x08" not in text and "\x07" not in text
    assert "red" in text and "evil" in text and "link" in text


def test_hostile_tool_names_and_results_stay_on_one_inert_line():
    error = {"name": "X", "code": "\x1b[2J\nFAKE", "message": ""}
    text = render(ToolResultEvent("c", "to\x1b[31mol\nname", "\x1b[2Jok\x07", None),
                  ToolResultEvent("c", "t", "", error))
    assert "\x1b" not in text and "\x07" not in text
    assert text.count("\n") == 2


def test_line_and_finish_are_for_the_harness_own_notes():
    out = io.StringIO()
    renderer = TranscriptRenderer(out, color=True)
    renderer(AssistantDelta("cut off"))
    renderer.line("turn cancelled", dim=True)
    assert out.getvalue() == f"cut off\n{DIM}turn cancelled{RESET}\n"
    renderer.finish()
    assert out.getvalue().endswith("\n") and not out.getvalue().endswith("\n\n")


def test_it_subscribes_to_the_event_stream():
    out = io.StringIO()
    events = EventStream()
    events.subscribe(TranscriptRenderer(out, color=False))
    events.emit(AssistantDelta("hi"))
    assert out.getvalue() == "hi"


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_color_only_on_a_terminal_without_no_color():
    assert color_enabled(Tty(), {})
    assert not color_enabled(io.StringIO(), {})
    assert not color_enabled(Tty(), {"NO_COLOR": "1"})
    assert not color_enabled(Tty(), {"TERM": "dumb"})
    assert color_enabled(Tty(), {"NO_COLOR": ""})  # no-color.org: set and non-empty


def test_no_color_in_the_environment_wins(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    renderer = TranscriptRenderer(out, color=True)
    renderer(ReasoningDelta("hmm"))
    renderer.line("note", dim=True)
    assert "\x1b" not in out.getvalue()


def test_without_final_text_only_intermediate_text_is_shown():
    call = [{"id": "c1", "name": "ask_user_question", "arguments": "{}"}]
    out = io.StringIO()
    renderer = TranscriptRenderer(out, color=False, final_text=False)
    renderer(AssistantDelta("Let me "))
    assert out.getvalue() == ""  # held: it may be the final answer, which goes to stdout
    renderer(AssistantDelta("ask."))
    renderer(AssistantMessage("Let me ask.", call))
    renderer(ToolResultEvent("c1", "ask_user_question", answers({"id": "a", "selected": ["x"]})))
    renderer(AssistantDelta("The final answer."))
    renderer(AssistantMessage("The final answer."))
    renderer(TurnCompleted(None))
    assert out.getvalue() == "Let me ask.\n· ask_user_question → answered (1)\n"


def test_replay_shows_the_end_of_a_stored_conversation_inert_and_compact():
    stream = io.StringIO()
    messages = [
        {"role": "system", "content": "secret system prompt"},
        {"role": "user", "content": "set it up"},
        {"role": "assistant", "content": "Asking.", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "ask_user_question", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1",
         "content": json.dumps({"answers": [{"id": "a", "selected": ["x"]}]})},
        {"role": "assistant", "content": "Done \x1b]52;c;evil\x07here."},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c2", "type": "function",
             "function": {"name": "ask_user_question", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps(
            {"error": {"name": "UserInteractionError", "code": "ASK_CANCELLED", "message": "m"}})},
    ]
    TranscriptRenderer(stream, color=False).replay(messages)
    text = stream.getvalue()
    assert "secret system prompt" not in text
    assert text.splitlines() == [
        "› set it up", "Asking.", "· ask_user_question → answered (1)", "Done here.",
        "› again", "· ask_user_question ✗ ASK_CANCELLED",
    ]
    stream = io.StringIO()
    TranscriptRenderer(stream, color=False).replay(messages, last=2)
    assert stream.getvalue().splitlines() == ["· ask_user_question ✗ ASK_CANCELLED"]


def test_streamed_model_text_wraps_between_words_at_the_terminal_width(monkeypatch):
    import io
    import os

    from dsh_cli.core.events import AssistantDelta, AssistantMessage, ReasoningDelta
    from dsh_cli.transcript import REASONING_MARK, TranscriptRenderer

    size = os.terminal_size((20, 10))
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=None: size)
    out = io.StringIO()
    renderer = TranscriptRenderer(out, color=False, wrap=True)
    for chunk in ["The quick brown fo", "x jumps over the lazy ", "dog, 日本語 ",
                  "supercalifragilisticexpialidocious end"]:
        renderer(AssistantDelta(chunk))
    renderer(AssistantMessage("…", []))
    lines = out.getvalue().splitlines()
    assert lines == ["The quick brown fox", "jumps over the lazy", "dog, 日本語",
                     "supercalifragilisticexpialidocious", "end"]
    out.seek(0), out.truncate()
    renderer(ReasoningDelta("thinking about a rather long plan"))
    renderer.finish()
    assert out.getvalue().splitlines() == [REASONING_MARK + "thinking about a",
                                           REASONING_MARK + "rather long plan"]


def test_a_pipe_gets_the_model_text_exactly_as_it_came():
    import io

    from dsh_cli.core.events import AssistantDelta
    from dsh_cli.transcript import TranscriptRenderer

    out = io.StringIO()
    renderer = TranscriptRenderer(out, color=False)
    renderer(AssistantDelta("a " * 200))
    assert out.getvalue() == "a " * 200
