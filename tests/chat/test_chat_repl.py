"""The chat REPL over a real prompt-toolkit prompt (pipe input), scripted models and answers."""

from __future__ import annotations

import asyncio
import json
import os
import signal

from dsh_cli.core.events import AssistantDelta, SessionStarted, UserMessage
from dsh_cli.interaction import ASK_CANCELLED, ScriptedProvider, UserInteractionError

CTRL_C = "\x03"
CTRL_D = "\x04"
ENTER = "\r"
QUESTION = {"id": "db", "question": "Which database?",
            "options": [{"label": "Postgres"}, {"label": "SQLite"}]}


def ask_turn(text="Let me ask.", questions=None):
    return {"content": text, "tool_calls": [
        {"name": "ask_user_question", "arguments": {"questions": questions or [QUESTION]}}]}


POSTGRES = {"answers": [{"id": "db", "selected": ["Postgres"]}]}


def test_a_message_streams_the_reply_and_ctrl_d_exits(scripted, drive):
    chat = drive("hello" + ENTER + CTRL_D, model=scripted({"content": "Hi there."}))
    assert chat.status == 0
    assert chat.out == "Hi there.\n"
    assert chat.runtime.loop.messages[-2:] == [
        {"role": "user", "content": "hello"}, {"role": "assistant", "content": "Hi there."}]


def test_ctrl_d_on_an_empty_prompt_exits_at_once(scripted, drive):
    chat = drive(CTRL_D, model=scripted())
    assert chat.status == 0 and chat.out == "" and chat.runtime.loop.messages == []


def test_blank_lines_are_not_sent(scripted, drive):
    chat = drive(ENTER + "   " + ENTER + CTRL_D, model=scripted())
    assert chat.runtime.loop.messages == [] and chat.err == ""


def test_ctrl_c_on_the_prompt_drops_the_line_and_keeps_the_chat(scripted, drive):
    chat = drive("half typed" + CTRL_C + "sent" + ENTER + CTRL_D,
                 model=scripted({"content": "ok"}))
    users = [m["content"] for m in chat.runtime.loop.messages if m["role"] == "user"]
    assert users == ["sent"]


def test_questions_are_answered_and_the_model_carries_on(scripted, drive):
    model = scripted(ask_turn(), {"content": "Postgres it is."})
    chat = drive("set it up" + ENTER + CTRL_D, model=model, replies=[POSTGRES])
    assert chat.out == "Let me ask.\n· ask_user_question → answered (1)\nPostgres it is.\n"
    assert [q.id for q in chat.provider.requests[0].questions] == ["db"]
    tool = next(m for m in chat.runtime.loop.messages if m["role"] == "tool")
    assert json.loads(tool["content"]) == POSTGRES


def test_a_cancelled_question_tells_the_model_ask_cancelled_and_it_continues(drive):
    cancelled = UserInteractionError("the user cancelled the questions", ASK_CANCELLED)
    chat = drive("set it up" + ENTER + CTRL_D, replies=[cancelled])  # the demo model
    assert "· ask_user_question ✗ ASK_CANCELLED\n" in chat.out
    assert "You dismissed the questions" in chat.out
    tool = next(m for m in chat.runtime.loop.messages if m["role"] == "tool")
    assert json.loads(tool["content"])["error"]["code"] == ASK_CANCELLED
    assert chat.status == 0


def test_the_demo_summarises_the_answers(drive):
    answer = {"answers": [{"id": "stack", "selected": ["Go + chi"]},
                          {"id": "features", "selected": ["Auth", "CI"]},
                          {"id": "name", "selected": [], "custom": "acme"}]}
    chat = drive("a shop" + ENTER + CTRL_D, replies=[answer])
    assert "- Stack: Go + chi\n- Features: Auth, CI\n- Name: acme (your own answer)" in chat.out


def _after_first_delta(action):
    async def during(repl, events):
        while not any(isinstance(e, AssistantDelta) for e in events):
            await asyncio.sleep(0.005)
        action(repl)
    return during


def test_ctrl_c_while_streaming_stops_the_turn_keeps_partial_text_and_reprompts(scripted, drive):
    slow = scripted({"content": "one two three four five six seven eight nine ten " * 20},
                    {"content": "next reply"}, delay=0.02)
    chat = drive("go" + ENTER + "again" + ENTER + CTRL_D, model=slow,
                 during=_after_first_delta(lambda repl: repl.interrupt()))
    assert "(turn cancelled)\n" in chat.out
    partial = chat.runtime.loop.messages[1]
    assert partial["role"] == "assistant" and partial["content"].startswith("one ")
    assert len(partial["content"]) < 200
    assert chat.out.endswith("next reply\n")  # back at the prompt, the chat goes on


def test_a_real_sigint_while_streaming_stops_the_turn_not_the_process(scripted, drive):
    slow = scripted({"content": "word " * 200}, delay=0.02)
    chat = drive("go" + ENTER + CTRL_D, model=slow, handle_sigint=True,
                 during=_after_first_delta(lambda repl: os.kill(os.getpid(), signal.SIGINT)))
    assert chat.status == 0
    assert "(turn cancelled)" in chat.out
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_ctrl_c_while_a_question_is_open_aborts_it_and_the_turn(scripted, drive):
    async def never(request):
        await asyncio.sleep(30)

    async def interrupt_when_asked(repl, events):
        while not provider.requests:
            await asyncio.sleep(0.005)
        repl.interrupt()

    provider = ScriptedProvider(lambda request: never(request))
    chat = drive("go" + ENTER + CTRL_D, model=scripted(ask_turn()), replies=provider,
                 during=interrupt_when_asked)
    assert "(turn cancelled)" in chat.out
    assert provider.cancelled  # the question UI was closed
    tool = next(m for m in chat.runtime.loop.messages if m["role"] == "tool")
    assert json.loads(tool["content"])["error"]["code"] == "ASK_ABORTED"


def test_a_model_error_is_one_line_and_the_chat_goes_on(scripted, drive):
    model = scripted({"error": "the endpoint said no", "code": "MODEL_ERROR"})
    chat = drive("first" + ENTER + "second" + ENTER + CTRL_D, model=model)
    assert chat.err.count("dsh: MODEL_ERROR: the endpoint said no\n") == 2
    assert chat.status == 0


def test_hostile_model_text_is_inert(scripted, drive):
    hostile = "\x1b]0;owned\x07\x1b[2J\x1b[1;1Hfake prompt\u202e\r\x9b6n done"
    chat = drive("hi" + ENTER + CTRL_D, model=scripted({"content": hostile}))
    for bad in ("\x1b", "\x07", "\u202e", "\r", "\x9b"):
        assert bad not in chat.out
    assert "fake prompt" in chat.out and "done" in chat.out


def test_a_resumed_session_re_asks_its_pending_batch_first(scripted, drive, make_runtime):
    runtime = make_runtime(scripted(ask_turn(), {"content": "Resumed and done."}))
    call = {"id": "call_1", "type": "function", "function": {
        "name": "ask_user_question", "arguments": json.dumps({"questions": [
            {"id": "db", "question": "Which database?",
             "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]})}}
    runtime.loop.reset(messages=[
        {"role": "user", "content": "set it up"},
        {"role": "assistant", "content": "Let me ask.", "tool_calls": [call]},
    ], resume_rpc_ids={"call_1": "q_original"})
    chat = drive(CTRL_D, runtime=runtime, replies=[POSTGRES])
    assert chat.provider.contexts[0].rpc_id == "q_original"
    assert chat.out == "· ask_user_question → answered (1)\nResumed and done.\n"


def test_user_messages_reach_the_event_stream(scripted, drive):
    chat = drive("hello" + ENTER + CTRL_D, model=scripted({"content": "hi"}))
    assert UserMessage("hello") in chat.events


def test_slash_help_lists_the_commands(scripted, drive):
    chat = drive("/help" + ENTER + CTRL_D, model=scripted())
    for name in ("/help", "/exit", "/quit", "/new", "/model", "/sessions", "/resume"):
        assert name in chat.out  # every command the man page names
    assert "ctrl-d" in chat.out and chat.runtime.loop.messages == []


def test_slash_exit_and_quit_end_the_chat(scripted, drive):
    for command in ("/exit", "/quit", "/EXIT"):
        chat = drive(command + ENTER + "never sent" + ENTER, model=scripted())
        assert chat.status == 0 and chat.runtime.loop.messages == []


def test_an_unknown_command_gets_a_hint_and_is_not_sent(scripted, drive):
    chat = drive("/frobnicate now" + ENTER + CTRL_D, model=scripted())
    assert "unknown command /frobnicate; /help lists them" in chat.out
    assert chat.runtime.loop.messages == []


def test_slash_new_starts_a_fresh_session_keeping_the_system_prompt(scripted, drive):
    model = scripted({"content": "first"}, {"content": "second"})
    chat = drive("one" + ENTER + "/new" + ENTER + CTRL_D, model=model, system="Be brief.")
    runtime = chat.runtime
    assert runtime.loop.messages == [{"role": "system", "content": "Be brief."}]
    started = [e for e in chat.events if isinstance(e, SessionStarted)]
    assert len(started) == 1 and started[0].session_id == runtime.session_id
    assert runtime.ui.session_id == runtime.session_id == runtime.loop.session_id
    assert f"new session {runtime.session_id}" in chat.out


def test_slash_model_shows_the_model(scripted, drive):
    chat = drive("/model" + ENTER + CTRL_D)
    assert "model demo " in chat.out
    assert "http" not in chat.out  # the demo has no endpoint to show


def test_slash_sessions_without_a_store_says_so(drive):
    chat = drive("/sessions" + ENTER + CTRL_D)
    assert "sessions are not being stored" in chat.out
