"""The round a call stores with its batch, and what a resumed call does with it, in process
against the real forms server (``tests/fakes/mcp_forms_server.py``): each ``open_forms`` is
a new server process, as after a crash. The keyed server's first round is data once stored
(its process is gone), so the module computes it once and each test resumes a copy."""

from __future__ import annotations

import asyncio
import copy
import json
import sys
import tempfile

import pytest
from fakes.mcp_forms_server import entry as forms_entry

from dsh_cli.core.errors import ASK_CANCELLED, UserInteractionError
from dsh_cli.interaction import ScriptedProvider, UserInteraction
from dsh_cli.mcp_client import McpToolset, parse_servers
from dsh_cli.mcp_client.forms.resume import KIND, Continuation
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.registry import ToolContext

KEY = "continuation-test-key-" + "k" * 32
TARGET, GO = "deploy:target", "deploy:approval"
ANSWERS = {"answers": [
    {"id": f"{TARGET}/env", "selected": ["staging"]}, {"id": f"{TARGET}/replicas", "custom": "5"},
    {"id": f"{GO}/approve", "selected": ["Yes"]}, {"id": f"{GO}/tags", "selected": ["safe"]}]}
ANSWERED = {"service": "api", "where": {"accept": {"env": "staging", "replicas": 5}},
            "go": {"accept": {"approve": True, "tags": ["safe"]}}}


async def open_forms(ui: UserInteraction, *args: str, notices: list[str] | None = None):
    configs = parse_servers({"mcpServers": {"forms": forms_entry(*args)}}, "t.json", {})
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 (open for the session)
    toolset = await McpToolset.start(configs, errlog=errlog, elicitation=ui,
                                     notice=notices.append if notices is not None else None)
    registry = ToolRegistry()
    toolset.register(registry)
    return toolset, registry


def session_with(*replies):
    ui = UserInteraction()
    provider = ScriptedProvider(list(replies))
    ui.register_provider(provider)
    return ui, provider


async def first_round(*args: str) -> dict:
    """The continuation the first process stores with its batch (the human never answers)."""
    ui, provider = session_with(UserInteractionError("gone", ASK_CANCELLED))
    toolset, registry = await open_forms(ui, *args)
    try:
        await registry.execute("mcp__forms__deploy", {"service": "api"},
                               ToolContext(user_interaction=ui, call_id="call-1"))
    finally:
        await toolset.close()
    (request,) = provider.requests
    assert request.continuation is not None
    return request.continuation


@pytest.fixture(scope="module")
def keyed_round(tmp_path_factory) -> dict:
    """What a keyed server's first process stored; each test gets its own copy."""
    with pytest.MonkeyPatch.context() as patch:  # a home of its own, as each test has
        patch.setenv("DSH_HOME", str(tmp_path_factory.mktemp("dsh-home")))
        return asyncio.run(asyncio.wait_for(first_round("--state-key", KEY), 30))


@pytest.fixture
def keyed(keyed_round: dict) -> dict:
    return copy.deepcopy(keyed_round)


async def resume(continuation: dict, *args: str, replies=(ANSWERS,)):
    ui, provider = session_with(*replies)
    notices: list[str] = []
    toolset, registry = await open_forms(ui, *args, notices=notices)
    try:
        result = await registry.execute(
            "mcp__forms__deploy", {"service": "api"},
            ToolContext(user_interaction=ui, call_id="call-1", rpc_id="q_stored",
                        continuation=continuation))
    finally:
        await toolset.close()
    return result, provider, notices


def test_each_round_stores_the_servers_result_with_its_batch(keyed):
    continuation = keyed
    assert continuation["kind"] == KIND
    assert (continuation["server"], continuation["tool"]) == ("forms", "deploy")
    endpoint = [sys.executable, *forms_entry("--state-key", KEY)["args"]]
    # kept as a digest: a URL's or a command line's token never reaches the store
    assert len(continuation["endpoint"]) == 64 and KEY not in json.dumps(continuation)
    stored = Continuation.from_json(continuation, "forms", endpoint, "deploy")
    assert stored is not None and stored.request_state.startswith("v1.")
    assert sorted(stored.result().input_requests) == [GO, TARGET]
    assert Continuation.from_json(continuation, "forms", endpoint, "rename") is None
    # the same name pointed at another server: its state and answers are not sent there
    elsewhere = ["https://elsewhere.example/mcp"]
    assert Continuation.from_json(continuation, "forms", elsewhere, "deploy") is None
    other_kind = {**continuation, "kind": "other"}
    assert Continuation.from_json(other_kind, "forms", endpoint, "deploy") is None
    broken = {**continuation, "round": {"inputRequests": "no"}}
    assert Continuation.from_json(broken, "forms", endpoint, "deploy") is None


def test_a_resumed_call_re_asks_the_stored_round_and_the_keyed_server_accepts_its_state(
        run, keyed):
    result, provider, notices = run(resume(keyed, "--state-key", KEY), ceiling=60)
    assert not result.is_error, result.content
    assert json.loads(result.content) == ANSWERED
    assert [context.rpc_id for context in provider.contexts] == ["q_stored"]
    assert notices == []


def test_a_refused_state_with_a_changed_form_asks_the_new_one_under_the_stored_rpc_id(run):
    """The stored round's wording differs from what the restarted server asks afresh (a
    server upgraded meanwhile): the earlier answer does not stand for the new batch."""
    async def go():
        continuation = copy.deepcopy(await first_round())  # the SDK's process-local key
        params = continuation["round"]["inputRequests"][TARGET]["params"]
        params["message"] = "Where should it go (old wording)?"
        return await resume(continuation, replies=(ANSWERS, ANSWERS))

    result, provider, notices = run(go(), ceiling=60)
    assert json.loads(result.content) == ANSWERED
    assert [context.rpc_id for context in provider.contexts] == ["q_stored", "q_stored"]
    assert "old wording" in (provider.requests[0].source.message or "")
    assert "old wording" not in (provider.requests[1].source.message or "")
    (notice,) = notices
    assert notice.startswith("dsh: MCP_STATE_REFUSED: forms refused the stored state of deploy")


def test_without_an_answer_source_a_stored_round_is_not_retried(run, tmp_path, keyed):
    log = tmp_path / "rounds.jsonl"

    async def go():
        continuation = keyed
        ui = UserInteraction()  # nothing registered: no capability, nothing to re-ask
        toolset, registry = await open_forms(ui, "--state-key", KEY, "--record", str(log))
        try:
            return await registry.execute(
                "mcp__forms__deploy", {"service": "api"},
                ToolContext(user_interaction=ui, call_id="call-1", rpc_id="q_stored",
                            continuation=continuation))
        finally:
            await toolset.close()

    result = run(go(), ceiling=60)
    assert result.is_error and result.error["code"] == "MCP_TOOL_ERROR"  # as a fresh call
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["state_in"] for line in calls if line["event"] == "call"] == [None]
