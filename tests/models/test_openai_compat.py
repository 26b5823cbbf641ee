"""The OpenAI-compatible client against a real local HTTP server speaking the API."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time

import pytest
from fakes.openai_server import Reply

from dsh_cli.agent import AgentLoop
from dsh_cli.core.events import EventStream
from dsh_cli.interaction import AbortSignal, ScriptedProvider, UserInteraction
from dsh_cli.models.base import Completion, ModelError, ReasoningDelta, TextDelta, Usage
from dsh_cli.models.openai_compat import (
    MODEL_AUTH,
    MODEL_BAD_REQUEST,
    MODEL_CONNECTION,
    MODEL_CONTEXT,
    MODEL_NOT_FOUND,
    MODEL_RATE_LIMIT,
    MODEL_SERVER,
    MODEL_STREAM,
    MODEL_TIMEOUT,
    OpenAIChatModel,
    _retry_after,
)
from dsh_cli.tools import AskUserQuestionTool, ToolRegistry
from dsh_cli.tools.ask_user_question import PARAMETERS

KEY = "sk-test-0123456789abcdefSECRET"
USER = [{"role": "user", "content": "hi"}]
DB = {"id": "db", "question": "Which database?",
      "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]}


def make_model(server, **options):
    options.setdefault("retry_base_delay", 0.001)
    return OpenAIChatModel(model="test-model", base_url=server.base_url, api_key=KEY, **options)


def collect(model, messages=USER, tools=()):
    """Everything the stream yielded, and the error that ended it (or None)."""
    async def go():
        items, error = [], None
        try:
            async for item in model.stream(messages, list(tools)):
                items.append(item)
        except ModelError as failure:
            error = failure
        finally:
            await model.aclose()
        return items, error

    return asyncio.run(go())


def assert_clean(error, code):
    assert error is not None and error.code == code, error
    assert "\n" not in error.message
    assert KEY not in error.message and KEY not in repr(error)
    # Nothing chained to it can reach a traceback: SDK errors carry the request headers.
    assert error.__cause__ is None and error.__context__ is None


# -- streaming --------------------------------------------------------------------------

def test_text_streams_as_deltas_then_one_completion(server):
    server.enqueue(Reply.text("Hello, world", chunk_size=5))
    items, error = collect(make_model(server))
    assert error is None
    assert items == [TextDelta("Hello"), TextDelta(", wor"), TextDelta("ld"),
                     Completion("Hello, world", [], Usage(10, 3), None)]
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "test-model"
    assert request.body["messages"] == USER
    assert request.body["stream"] is True
    assert "tools" not in request.body  # an empty tools list is refused by OpenAI


def test_one_tool_call_split_over_many_chunks(server):
    arguments = json.dumps({"questions": [DB]})
    server.enqueue(Reply.tool_calls([("ask_user_question", arguments, "call_abc")],
                                    chunk_size=1))
    items, error = collect(make_model(server))
    assert error is None
    (completion,) = items
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [
        ("call_abc", "ask_user_question", arguments)]
    assert json.loads(completion.tool_calls[0].arguments) == {"questions": [DB]}


def test_two_tool_calls_in_one_turn_keep_their_order(server):
    server.enqueue(Reply.tool_calls([("first", {"a": 1}, "c1"), ("second", "{}", "c2")],
                                    content="Two things.", chunk_size=3))
    items, error = collect(make_model(server))
    assert error is None
    completion = items[-1]
    assert completion.content == "Two things."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in completion.tool_calls] == [
        ("c1", "first", {"a": 1}), ("c2", "second", {})]


def test_reasoning_is_yielded_but_never_sent_back(server):
    server.enqueue(Reply.text("42", reasoning="Let me think.", chunk_size=7))
    history = [{"role": "user", "content": "q"},
               {"role": "assistant", "content": "a", "reasoning_content": "old thoughts"},
               {"role": "user", "content": "hi"}]
    items, error = collect(make_model(server), history)
    assert error is None
    assert items[:3] == [ReasoningDelta("Let me "), ReasoningDelta("think."), TextDelta("42")]
    assert items[-1].reasoning == "Let me think."
    assert "reasoning_content" not in server.requests[0].raw.decode()
    assert history[1]["reasoning_content"] == "old thoughts"  # the caller's list untouched


def test_the_tools_are_sent_as_given(server):
    server.enqueue(Reply.text("ok"))
    tools = ToolRegistry([AskUserQuestionTool()]).specs()
    collect(make_model(server), USER, tools)
    (tool,) = server.requests[0].body["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "ask_user_question"
    assert tool["function"]["parameters"] == PARAMETERS


# -- through the agent loop -----------------------------------------------------------------

def make_loop(server, provider, events):
    ui = UserInteraction(events=events)
    ui.register_provider(provider)
    return AgentLoop(model=make_model(server), tools=ToolRegistry([AskUserQuestionTool()]),
                     ui=ui, events=events, session_id="s1")


def run_turn(loop, content):
    async def go():
        try:
            return await loop.run_turn(content)
        finally:
            await loop.model.aclose()

    return asyncio.run(go())


def test_an_ask_round_trip_sends_the_answer_back_as_the_tool_result(server):
    server.enqueue(
        Reply.tool_calls([("ask_user_question", {"questions": [DB]}, "call_1")],
                         content="Let me ask.", chunk_size=4),
        Reply.text("Using SQLite.", chunk_size=4),
    )
    events = EventStream()
    seen = []
    events.subscribe(lambda event: seen.append(json.dumps(event.to_json())))
    provider = ScriptedProvider([{"answers": [{"id": "db", "selected": ["SQLite"]}]}])
    loop = make_loop(server, provider, events)
    assert run_turn(loop, "set up a project") == "Using SQLite."

    first, second = server.bodies
    assert first["messages"] == [{"role": "user", "content": "set up a project"}]
    assert first["tools"][0]["function"]["parameters"] == PARAMETERS
    assistant, tool = second["messages"][1:]
    assert assistant["role"] == "assistant" and assistant["content"] == "Let me ask."
    assert assistant["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "ask_user_question", "arguments": json.dumps({"questions": [DB]})}}]
    assert tool == {"role": "tool", "tool_call_id": "call_1",
                    "content": '{"answers":[{"id":"db","selected":["SQLite"]}]}'}
    assert provider.requests[0].questions[0].id == "db"
    # The key went only into the Authorization header.
    assert seen and not any(KEY in line for line in seen)
    assert all(KEY not in json.dumps(m) for m in loop.messages)
    for request in server.requests:
        assert KEY not in request.raw.decode()
        assert [v for v in request.headers.values() if KEY in v] == [f"Bearer {KEY}"]


def test_a_failed_model_call_appends_nothing_to_the_conversation(server):
    server.enqueue(Reply.error(401, f"Incorrect API key provided: {KEY}"))
    loop = make_loop(server, ScriptedProvider([]), EventStream())
    with pytest.raises(ModelError) as caught:
        run_turn(loop, "hello")
    assert_clean(caught.value, MODEL_AUTH)
    assert loop.messages == [{"role": "user", "content": "hello"}]


def test_a_stream_cut_inside_a_tool_call_leaves_no_call_without_a_result(server):
    server.enqueue(Reply.tool_calls([("ask_user_question", {"questions": [DB]}, "call_1")],
                                    content="Let me ask.", chunk_size=4, cut_after=6))
    provider = ScriptedProvider([])
    loop = make_loop(server, provider, EventStream())
    with pytest.raises(ModelError) as caught:
        run_turn(loop, "hello")
    assert_clean(caught.value, MODEL_STREAM)
    assert provider.requests == []  # half a call is never run
    assert not any(m.get("tool_calls") for m in loop.messages)
    assert loop.messages[0] == {"role": "user", "content": "hello"}


# -- faults ----------------------------------------------------------------------------------

def test_429_is_retried_after_the_servers_retry_after(server):
    server.enqueue(Reply.error(429, "slow down", type="rate_limit_error",
                               headers={"Retry-After": "0.2"}),
                   Reply.text("finally"))
    notices = []
    items, error = collect(make_model(server, on_retry=notices.append))
    assert error is None and items[-1].content == "finally"
    assert len(server.requests) == 2
    assert [(n.attempt, n.delay, n.error.code) for n in notices] == [(1, 0.2, MODEL_RATE_LIMIT)]
    assert server.requests[1].received_at - server.requests[0].received_at >= 0.2


def test_retry_after_longer_than_the_limit_is_not_waited_for(server):
    server.enqueue(Reply.error(429, "come back tomorrow", headers={"Retry-After": "86400"}))
    _items, error = collect(make_model(server, max_retry_after=5))
    assert_clean(error, MODEL_RATE_LIMIT)
    assert "come back tomorrow" in error.message
    assert len(server.requests) == 1


def test_server_errors_are_retried_until_the_budget_ends(server):
    server.enqueue(*[Reply.error(500, "boom", type="server_error") for _ in range(4)])
    notices = []
    items, error = collect(make_model(server, max_retries=2, on_retry=notices.append))
    assert items == []
    assert_clean(error, MODEL_SERVER)
    assert "HTTP 500" in error.message and "boom" in error.message
    assert len(server.requests) == 3
    assert [n.attempt for n in notices] == [1, 2]
    assert server.pending == 1


def test_a_stream_cut_mid_message_is_a_stream_error_and_not_retried(server):
    server.enqueue(Reply.text("abcdefgh", chunk_size=2, cut_after=3), Reply.text("again"))
    items, error = collect(make_model(server))
    assert items == [TextDelta("ab"), TextDelta("cd")]
    assert_clean(error, MODEL_STREAM)
    assert len(server.requests) == 1  # text was already out: a retry would repeat it


def test_a_stream_that_ends_without_finishing_is_a_stream_error(server):
    events = [{"choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}],
               "id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}]
    server.enqueue(Reply(raw_events=events))
    items, error = collect(make_model(server))
    assert items == [TextDelta("half")]
    assert_clean(error, MODEL_STREAM)


def test_a_cut_before_any_text_is_retried(server):
    server.enqueue(Reply.text("lost", cut_after=1), Reply.text("kept"))
    items, error = collect(make_model(server))
    assert error is None and items[-1].content == "kept"
    assert len(server.requests) == 2


def test_a_silent_server_times_out_without_retrying(server):
    server.enqueue(Reply.text("too late", delay=5))
    _items, error = collect(make_model(server, timeout=0.3))
    assert_clean(error, MODEL_TIMEOUT)
    assert "0.3s" in error.message
    assert len(server.requests) == 1


def test_a_stream_that_stalls_mid_message_times_out(server):
    server.enqueue(Reply.text("abcdef", chunk_size=2, chunk_delay=5))
    items, error = collect(make_model(server, timeout=0.3))
    assert_clean(error, MODEL_TIMEOUT)
    assert items == [TextDelta("ab")]
    assert "no data from" in error.message


@pytest.mark.parametrize("status", [401, 403])
def test_a_rejected_key_is_an_auth_error_and_the_key_is_scrubbed(server, status):
    masked = f"{KEY[:8]}****{KEY[-4:]}"
    server.enqueue(Reply.error(status, f"Incorrect API key provided: {KEY} ({masked})",
                               code="invalid_api_key"))
    _items, error = collect(make_model(server))
    assert_clean(error, MODEL_AUTH)
    assert f"HTTP {status}" in error.message
    assert KEY[:8] not in error.message
    assert len(server.requests) == 1


def test_an_unknown_model_is_not_found(server):
    server.enqueue(Reply.error(404, "The model `test-model` does not exist",
                               code="model_not_found"))
    _items, error = collect(make_model(server))
    assert_clean(error, MODEL_NOT_FOUND)
    assert "'test-model'" in error.message and "--base-url" in error.message


def test_a_wrong_base_url_is_not_found(server):
    model = OpenAIChatModel(model="m", base_url=server.root_url + "/nope", api_key=KEY)
    _items, error = collect(model)
    assert_clean(error, MODEL_NOT_FOUND)


def test_a_refused_request_is_a_bad_request(server):
    server.enqueue(Reply.error(400, "messages: \x1b[31mbad\x1b[0m\nrole"))
    _items, error = collect(make_model(server))
    assert_clean(error, MODEL_BAD_REQUEST)
    assert "\x1b" not in error.message and "messages: bad role" in error.message
    assert len(server.requests) == 1


def test_an_exhausted_context_has_its_own_code(server):
    server.enqueue(Reply.error(
        400, "This model's maximum context length is 65536 tokens. However, you requested "
        "70000 tokens. Please reduce the length of the messages."))
    _items, error = collect(make_model(server))
    assert_clean(error, MODEL_CONTEXT)


def test_an_unreachable_server_is_a_connection_error_after_retries():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    notices = []
    model = OpenAIChatModel(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY,
                            max_retries=2, retry_base_delay=0.001, on_retry=notices.append)
    _items, error = collect(model)
    assert_clean(error, MODEL_CONNECTION)
    assert len(notices) == 2
    assert error.message.endswith("check the address (--base-url or DSH_BASE_URL) and the "
                                  "network, or try the offline demo with -m demo")


def test_cancelling_stops_a_slow_stream_promptly(server):
    server.enqueue(Reply.text("abcdef", chunk_size=2, chunk_delay=10))
    model = make_model(server)

    async def go():
        got = []

        async def consume():
            async for item in model.stream(USER, []):
                got.append(item)

        task = asyncio.ensure_future(consume())
        while not got:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await model.aclose()
        return got, time.monotonic() - started

    got, took = asyncio.run(asyncio.wait_for(go(), 5))
    assert got == [TextDelta("ab")]
    assert took < 2  # far below the 10 s the server would have made it wait


def test_an_aborted_turn_through_the_loop_stops_the_stream(server):
    server.enqueue(Reply.text("abcdef", chunk_size=2, chunk_delay=10))
    events = EventStream()
    loop = make_loop(server, ScriptedProvider([]), events)
    signal = AbortSignal()
    events.subscribe(lambda event: signal.abort("stop") if event.type == "assistant/delta"
                     else None)

    async def go():
        try:
            await loop.run_turn("go", signal)
        finally:
            await loop.model.aclose()

    from dsh_cli.agent import TurnCancelled

    with pytest.raises(TurnCancelled):
        asyncio.run(asyncio.wait_for(go(), 5))


# -- small pieces ----------------------------------------------------------------------------

def test_retry_after_forms():
    assert _retry_after({"retry-after-ms": "250"}) == 0.25
    assert _retry_after({"retry-after": "3"}) == 3.0
    assert _retry_after({"retry-after": "soon"}) is None
    assert _retry_after({}) is None
    in_ten = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 10))
    assert 8 <= _retry_after({"retry-after": in_ten}) <= 10


def test_the_key_stays_out_of_repr():
    model = OpenAIChatModel(model="m", base_url="http://127.0.0.1:1/v1", api_key=KEY)
    assert KEY not in repr(model) and model.name == "m"


def test_importing_the_client_does_not_import_the_sdk():
    code = ("import sys; import dsh_cli.models.openai_compat as m; "
            "m.OpenAIChatModel(model='x', base_url='http://h', api_key='k'); "
            "from dsh_cli.config import load_settings; from dsh_cli.models.resolve import "
            "resolve_model; resolve_model(load_settings(model='x', environ={'DSH_API_KEY': 'k'},"
            " config={})); print('openai' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_scrubbing_removes_the_key_and_its_masked_echoes_but_nothing_else():
    from dsh_cli.models.key_scrub import scrub_key as _scrub

    masked = f"{KEY[:10]}*****{KEY[-4:]}"
    assert _scrub(f"bad key {KEY}, shown as {masked}.", KEY) == "bad key [key], shown as [key]"
    assert _scrub("maximum context length in tokens", "k") == "maximum context length in tokens"
    assert _scrub("key k was refused", "k") == "key [key] was refused"


def test_an_error_event_inside_the_stream_is_reported(server):
    server.enqueue(Reply(raw_events=[{"error": {"message": "overloaded", "type": "server"}}]))
    _items, error = collect(make_model(server))
    assert_clean(error, MODEL_STREAM)
    assert "overloaded" in error.message


def test_garbage_in_the_stream_is_a_stream_error(server):
    server.enqueue(Reply(raw_events=["this is not json"]))
    _items, error = collect(make_model(server, max_retries=0))
    assert_clean(error, MODEL_STREAM)
