"""Whole conversations on the scripted model through the real loop, tools and seam."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from dsh_cli.agent import AgentLoop, TurnCancelled
from dsh_cli.core.events import (
    AssistantDelta,
    AssistantMessage,
    EventStream,
    QuestionRequested,
    QuestionResolved,
    ToolResultEvent,
    ToolStarted,
    TurnCompleted,
)
from dsh_cli.interaction import AbortSignal, ScriptedProvider, UserInteraction
from dsh_cli.models import ModelError
from dsh_cli.models.scripted import ScriptedModel
from dsh_cli.providers.answers_file import AnswersFileProvider
from dsh_cli.tools import AskUserQuestionTool, Tool, ToolRegistry

DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]}
NAME = {"id": "name", "question": "Project name?"}


def ask(*questions, call_id=None):
    call = {"name": "ask_user_question", "arguments": {"questions": list(questions)}}
    if call_id:
        call["id"] = call_id
    return call


def make_loop(turns, provider=None, *, events=None, max_calls=50, delay=0.0):
    events = events or EventStream()
    ui = UserInteraction(events=events)
    if provider is not None:
        ui.register_provider(provider)
    model = ScriptedModel(turns, delay=delay)
    return AgentLoop(model=model, tools=ToolRegistry([AskUserQuestionTool()]), ui=ui,
                     events=events, session_id="s1", max_model_calls=max_calls)


def tool_messages(loop):
    return [json.loads(m["content"]) for m in loop.messages if m["role"] == "tool"]


def test_question_answered_from_a_file_becomes_the_tool_result():
    provider = AnswersFileProvider({"db": ["SQLite"], "name": "acme"})
    loop = make_loop([{"content": "Let me ask.", "tool_calls": [ask(DB, NAME)]},
                      {"content": "Done."}], provider)
    final = asyncio.run(loop.run_turn("start"))
    assert final == "Done."
    assert tool_messages(loop) == [{"answers": [{"id": "db", "selected": ["SQLite"]},
                                                {"id": "name", "selected": [], "custom": "acme"}]}]
    assert [m["role"] for m in loop.messages] == ["user", "assistant", "tool", "assistant"]


def test_two_questions_in_one_step_are_asked_in_order():
    provider = ScriptedProvider([{"answers": [{"id": "db", "selected": ["SQLite"]}]},
                                 {"answers": [{"id": "name", "selected": [], "custom": "x"}]}])
    loop = make_loop([{"tool_calls": [ask(DB), ask(NAME)]}, {"content": "ok"}], provider)
    asyncio.run(loop.run_turn("go"))
    assert [r.questions[0].id for r in provider.requests] == ["db", "name"]
    calls = loop.messages[1]["tool_calls"]
    results = [m["tool_call_id"] for m in loop.messages if m["role"] == "tool"]
    assert results == [c["id"] for c in calls]


def test_missing_answer_is_a_no_provider_tool_error_and_the_model_continues():
    reports = []
    provider = AnswersFileProvider({"db": ["SQLite"]}, report=reports.append)
    loop = make_loop([{"tool_calls": [ask(NAME)]}, {"content": "fine"}], provider)
    assert asyncio.run(loop.run_turn("go")) == "fine"
    error = tool_messages(loop)[0]["error"]
    assert error["code"] == "NO_PROVIDER" and "'name'" in error["message"]
    assert reports and reports[0].startswith("dsh: NO_PROVIDER:")


def test_invalid_answer_is_an_invalid_answer_tool_error():
    provider = AnswersFileProvider({"db": ["MySQL"]})
    loop = make_loop([{"tool_calls": [ask(DB)]}, {"content": "fine"}], provider)
    asyncio.run(loop.run_turn("go"))
    error = tool_messages(loop)[0]["error"]
    assert error == {"name": "UserInteractionError", "code": "INVALID_ANSWER",
                     "message": error["message"]}
    assert 'unknown label "MySQL"' in error["message"]


def test_unknown_tool_is_reported_to_the_model():
    loop = make_loop([{"tool_calls": [{"name": "rm_rf", "arguments": {}}]}, {"content": "ok"}])
    asyncio.run(loop.run_turn("go"))
    assert tool_messages(loop)[0]["error"]["code"] == "UNKNOWN_TOOL"


def test_malformed_arguments_give_invalid_args_and_the_model_can_retry():
    provider = ScriptedProvider([{"answers": [{"id": "db", "selected": ["SQLite"]}]}])
    loop = make_loop([
        {"tool_calls": [{"name": "ask_user_question", "arguments": "{not json"}]},
        {"tool_calls": [{"name": "ask_user_question", "arguments": {"questions": [{"id": "x"}]}}]},
        {"tool_calls": [ask(DB)]},
        {"content": "thanks"},
    ], provider)
    assert asyncio.run(loop.run_turn("go")) == "thanks"
    first, second, third = tool_messages(loop)
    assert first["error"]["code"] == "INVALID_ARGS"
    assert second["error"] == {"name": "ToolError", "code": "INVALID_ARGS",
                               "message": "questions[0].question: field required"}
    assert third == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_cancellation_mid_question_aborts_it_and_skips_the_rest():
    signal = AbortSignal()
    shown = asyncio.Event()

    async def never(request):
        shown.set()
        await asyncio.Event().wait()

    provider = ScriptedProvider(lambda request: never(request))
    loop = make_loop([{"tool_calls": [ask(DB), ask(NAME)]}, {"content": "unreachable"}], provider)

    async def scenario():
        turn = asyncio.ensure_future(loop.run_turn("go", signal))
        await shown.wait()
        signal.abort("cancelled by the user")
        with pytest.raises(TurnCancelled):
            await turn

    asyncio.run(scenario())
    codes = [m["error"]["code"] for m in tool_messages(loop)]
    assert codes == ["ASK_ABORTED", "ABORTED_BEFORE_DISPATCH"]
    assert provider.cancelled, "the UI was told to close"


class NoArgs(BaseModel):
    pass


class Probe(Tool):
    """Counts the listeners on the turn's signal while it runs; waits for an abort if told."""

    name = "probe"
    description = "Count the turn signal's listeners."
    Args = NoArgs

    def __init__(self, turn, *, wait_on_call=None):
        self.turn, self.wait_on_call, self.seen, self.aborted = turn, wait_on_call, [], []
        self.waiting = asyncio.Event()

    async def run(self, args, ctx):
        self.seen.append(len(self.turn._callbacks))
        if len(self.seen) == self.wait_on_call:
            self.waiting.set()
            self.aborted.append(await ctx.signal.wait())
        return "ok"


def probe_loop(probe, calls):
    events = EventStream()
    return AgentLoop(model=ScriptedModel([{"tool_calls": [{"name": "probe", "arguments": {}}]
                                           * calls}, {"content": "done"}]),
                     tools=ToolRegistry([probe]), ui=UserInteraction(events=events),
                     events=events, session_id="s1")


def test_tool_calls_leave_no_listener_on_the_turns_signal():
    """Each call's signal is hooked to the turn's while it runs and let go when it ends: a turn
    of many calls does not grow its signal by one listener per call."""
    signal = AbortSignal()
    probe = Probe(signal)
    assert asyncio.run(probe_loop(probe, 5).run_turn("go", signal)) == "done"
    assert probe.seen == [1, 1, 1, 1, 1]  # the running call's own, none of the calls before
    assert signal._callbacks == []
    assert signal.abort("later")


def test_an_abort_of_the_turn_still_aborts_the_running_call_and_lets_it_go():
    signal = AbortSignal()
    probe = Probe(signal, wait_on_call=3)
    loop = probe_loop(probe, 5)

    async def scenario():
        turn = asyncio.ensure_future(loop.run_turn("go", signal))
        await probe.waiting.wait()
        signal.abort("cancelled by the user")
        with pytest.raises(TurnCancelled):
            await turn

    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert probe.aborted == ["cancelled by the user"]
    results = [m["content"] for m in loop.messages if m["role"] == "tool"]
    assert results[:3] == ["ok"] * 3
    assert [json.loads(r)["error"]["code"] for r in results[3:]] == \
        ["ABORTED_BEFORE_DISPATCH"] * 2
    assert signal._callbacks == []


def test_cancellation_while_streaming_keeps_the_text_that_arrived():
    signal = AbortSignal()
    events = EventStream()
    loop = make_loop([{"content": "one two three four five six seven eight"}], events=events,
                     delay=0.05)

    async def scenario():
        arrived = asyncio.Event()
        events.subscribe(lambda e: arrived.set() if isinstance(e, AssistantDelta) else None)
        turn = asyncio.ensure_future(loop.run_turn("go", signal))
        await arrived.wait()
        signal.abort("stop")
        with pytest.raises(TurnCancelled):
            await turn

    asyncio.run(scenario())
    partial = loop.messages[-1]
    assert partial["role"] == "assistant" and partial["content"].startswith("one")
    assert partial["content"] != "one two three four five six seven eight"


def test_turn_limit_is_a_model_error():
    loop = make_loop([{"tool_calls": [{"name": "nope", "arguments": {}}]}] * 10, max_calls=3)
    with pytest.raises(ModelError) as caught:
        asyncio.run(loop.run_turn("go"))
    assert caught.value.code == "TURN_LIMIT"
    assert sum(1 for m in loop.messages if m["role"] == "assistant") == 3


def test_running_out_of_script_is_a_model_error_not_a_hang():
    loop = make_loop([{"content": "only"}])
    asyncio.run(loop.run_turn("one"))
    with pytest.raises(ModelError, match="no turn 2"):
        asyncio.run(loop.run_turn("two"))


def test_events_tell_the_whole_story_in_order():
    events = EventStream()
    seen = []
    events.subscribe(seen.append)
    provider = ScriptedProvider([{"answers": [{"id": "db", "selected": []}]}])
    loop = make_loop([{"content": "Asking.", "tool_calls": [ask(DB, call_id="c1")]},
                      {"content": "Bye."}], provider, events=events)
    asyncio.run(loop.run_turn("go"))
    kinds = [type(e) for e in seen if not isinstance(e, AssistantDelta)]
    assert kinds[1:] == [AssistantMessage, ToolStarted, QuestionRequested, QuestionResolved,
                         ToolResultEvent, AssistantMessage, TurnCompleted]
    requested = next(e for e in seen if isinstance(e, QuestionRequested))
    assert requested.call_id == "c1" and requested.session_id == "s1"
    assert "".join(e.text for e in seen if isinstance(e, AssistantDelta)) == "Asking.Bye."


def test_resumed_calls_are_completed_first_under_their_rpc_id():
    provider = ScriptedProvider([{"answers": [{"id": "db", "selected": ["SQLite"]}]}])
    loop = make_loop([{"tool_calls": [ask(DB, call_id="c9")]}, {"content": "resumed"}], provider)
    loop.reset("s1", messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"id": "c9", "type": "function", "function": {
             "name": "ask_user_question", "arguments": json.dumps({"questions": [DB]})}}]},
    ], resume_rpc_ids={"c9": "q_original"})
    assert asyncio.run(loop.run_turn(None)) == "resumed"
    assert provider.contexts[0].rpc_id == "q_original"
    assert [m["role"] for m in loop.messages] == ["user", "assistant", "tool", "assistant"]


SKIP_DB = {"answers": [{"id": "db", "selected": []}]}


def test_reset_starts_over_in_the_new_session_keeping_the_system_prompt():
    events = EventStream()
    seen = []
    events.subscribe(seen.append)
    provider = ScriptedProvider([SKIP_DB, SKIP_DB])
    ui = UserInteraction(events=events)
    ui.register_provider(provider)
    loop = AgentLoop(model=ScriptedModel([{"tool_calls": [ask(DB, call_id="c1")]},
                                          {"content": "Done."}]),
                     tools=ToolRegistry([AskUserQuestionTool()]), ui=ui, events=events,
                     system="Be brief.", session_id="s1")
    assert asyncio.run(loop.run_turn("go")) == "Done."
    loop.reset("s2")
    assert loop.messages == [{"role": "system", "content": "Be brief."}]
    assert loop.session_id == ui.session_id == "s2"
    assert asyncio.run(loop.run_turn("again")) == "Done."
    assert [e.session_id for e in seen if isinstance(e, QuestionRequested)] == ["s1", "s2"]
    assert [e.session_id for e in seen if isinstance(e, TurnCompleted)] == ["s1", "s2"]
    assert [m["content"] for m in loop.messages if m["role"] == "user"] == ["again"]


def test_reset_with_a_stored_conversation_keeps_its_own_system_prompt():
    loop = make_loop([])
    stored = [{"role": "system", "content": "Stored."}, {"role": "user", "content": "hi"}]
    loop.reset("s7", messages=stored, system="Flag.")
    assert loop.messages == stored and loop.messages is not stored
    assert loop.system == "Stored."


def test_reset_forgets_the_rpc_ids_of_the_session_it_leaves():
    provider = ScriptedProvider([SKIP_DB])
    loop = make_loop([{"tool_calls": [ask(DB, call_id="c9")]}, {"content": "Done."}], provider)
    loop.reset(resume_rpc_ids={"c9": "q_original"})
    loop.reset("s2")
    assert asyncio.run(loop.run_turn("go")) == "Done."
    assert provider.contexts[0].rpc_id != "q_original"


def test_a_resumed_rpc_id_is_used_once():
    provider = ScriptedProvider([SKIP_DB, SKIP_DB])
    loop = make_loop([{"tool_calls": [ask(DB, call_id="c9")]},
                      {"tool_calls": [ask(DB, call_id="c9")]}, {"content": "Done."}], provider)
    loop.reset(resume_rpc_ids={"c9": "q_original"})
    assert asyncio.run(loop.run_turn("go")) == "Done."
    assert [c.rpc_id == "q_original" for c in provider.contexts] == [True, False]


def test_the_session_id_has_one_owner_the_seam():
    loop = make_loop([])
    assert loop.session_id == loop.ui.session_id == "s1"
    loop.ui.session_id = "s9"
    assert loop.session_id == "s9"
    other = AgentLoop(model=ScriptedModel([]), tools=ToolRegistry([]), ui=loop.ui)
    assert other.session_id == "s9"  # no session given: the seam's stands
