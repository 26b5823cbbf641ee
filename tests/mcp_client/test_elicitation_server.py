"""A real server's elicitations through dsh's seam (``tests/fakes/mcp_forms_server.py``).

The server negotiates 2026-07-28, so ``deploy``'s two forms arrive as one input-required
result and must be asked as one batch. It answers from what each call brings and keeps
nothing between calls, so one server process over HTTP serves the module (each test opens
its own connection); over stdio, ``test_elicitation_continuation`` and
``test_elicitation_resume`` start a server process each, as a restart needs.
"""

from __future__ import annotations

import json
import tempfile

import pytest
from harness.http_fake import served

from dsh_cli.core.errors import ASK_CANCELLED, ASK_DECLINED, MCP_TOOL_ERROR, UserInteractionError
from dsh_cli.interaction import ScriptedProvider, UserInteraction
from dsh_cli.mcp_client import McpToolset, parse_servers
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.registry import ToolContext

TARGET, GO = "deploy:target", "deploy:approval"


@pytest.fixture(scope="module")
def forms_url():
    with served("mcp_forms_server.py") as url:
        yield url


async def open_forms(url: str, ui: UserInteraction, **options):
    configs = parse_servers({"mcpServers": {"forms": {"url": url, **options}}}, "t.json", {})
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 (open for the session)
    toolset = await McpToolset.start(configs, errlog=errlog, elicitation=ui)
    registry = ToolRegistry()
    toolset.register(registry)
    return toolset, registry


def session_with(*replies, delay=0.0):
    ui = UserInteraction()
    provider = ScriptedProvider(list(replies), delay=delay)
    ui.register_provider(provider)
    return ui, provider


def call(registry, ui, name, arguments, rpc_id=None):
    ctx = ToolContext(user_interaction=ui, call_id="call-1", rpc_id=rpc_id)
    return registry.execute(name, arguments, ctx)


def deploy_answers(env="production", replicas=None, approve="Yes", tags=()):
    replicas_item = {"id": f"{TARGET}/replicas"}
    if replicas is not None:
        replicas_item["custom"] = replicas
    return {"answers": [
        {"id": f"{TARGET}/env", "selected": [env]}, replicas_item,
        {"id": f"{GO}/approve", "selected": [approve]},
        {"id": f"{GO}/tags", "selected": list(tags)}]}


def test_two_forms_at_once_are_one_batch_and_the_server_gets_typed_values(run, forms_url):
    async def go():
        ui, provider = session_with(deploy_answers(replicas="4", tags=["fast", "loud"]))
        toolset, registry = await open_forms(forms_url, ui)
        try:
            result = await call(registry, ui, "mcp__forms__deploy", {"service": "api"})
        finally:
            await toolset.close()
        return result, provider

    result, provider = run(go(), ceiling=30)
    assert not result.is_error, result.content
    assert json.loads(result.content) == {
        "service": "api",
        "where": {"accept": {"env": "production", "replicas": 4}},
        "go": {"accept": {"approve": True, "tags": ["fast", "loud"]}}}
    (request,) = provider.requests
    assert [q.id for q in request.questions] == [
        f"{TARGET}/env", f"{TARGET}/replicas", f"{GO}/approve", f"{GO}/tags"]
    assert request.call_id == "call-1"
    assert [q.question for q in request.questions] == [
        "Environment", "Replicas", "Go ahead?", "Tags"]
    assert request.questions[2].labels == ["Yes", "No"]


def test_a_skipped_optional_number_takes_the_schema_default(run, forms_url):
    async def go():
        ui, _ = session_with(deploy_answers(env="staging", approve="No"))
        toolset, registry = await open_forms(forms_url, ui)
        try:
            return await call(registry, ui, "mcp__forms__deploy", {"service": "web"})
        finally:
            await toolset.close()

    result = run(go(), ceiling=30)
    assert json.loads(result.content)["where"] == {"accept": {"env": "staging", "replicas": 2}}
    assert json.loads(result.content)["go"] == {"accept": {"approve": False, "tags": []}}


def test_decline_and_cancel_reach_the_server_as_such(run, forms_url):
    async def go(error):
        ui, _ = session_with(error)
        toolset, registry = await open_forms(forms_url, ui)
        try:
            return await call(registry, ui, "mcp__forms__deploy", {"service": "api"})
        finally:
            await toolset.close()

    declined = run(go(UserInteractionError("no thanks", ASK_DECLINED)), ceiling=30)
    assert json.loads(declined.content) == {"service": "api", "where": "decline",
                                            "go": "decline"}
    cancelled = run(go(UserInteractionError("esc", ASK_CANCELLED)), ceiling=30)
    assert json.loads(cancelled.content)["where"] == "cancel"


def test_a_value_that_breaks_the_rule_is_never_sent(run, forms_url):
    async def go():
        ui, _ = session_with({"answers": [{"id": "name", "custom": "X!"}, {"id": "api_token"}]})
        toolset, registry = await open_forms(forms_url, ui)
        try:
            return await call(registry, ui, "mcp__forms__rename", {})
        finally:
            await toolset.close()

    result = run(go(), ceiling=30)
    assert json.loads(result.content) == {"rename": "cancel"}


def test_one_form_uses_plain_ids_and_warns_about_the_token(run, forms_url):
    async def go():
        ui, provider = session_with({"answers": [{"id": "name", "custom": "billing-2"},
                                                 {"id": "api_token"}]})
        toolset, registry = await open_forms(forms_url, ui)
        try:
            return await call(registry, ui, "mcp__forms__rename", {}), provider
        finally:
            await toolset.close()

    result, provider = run(go(), ceiling=30)
    assert json.loads(result.content) == {
        "rename": {"accept": {"name": "billing-2", "api_token": "none"}}}
    dumped = provider.requests[0].questions_json()
    assert [q["id"] for q in dumped] == ["name", "api_token"]


def test_a_resumed_call_re_asks_under_the_stored_rpc_id(run, forms_url):
    async def go():
        ui, provider = session_with(deploy_answers())
        toolset, registry = await open_forms(forms_url, ui)
        try:
            await call(registry, ui, "mcp__forms__deploy", {"service": "api"},
                       rpc_id="rpc-stored-7")
        finally:
            await toolset.close()
        return provider

    provider = run(go(), ceiling=30)
    assert [context.rpc_id for context in provider.contexts] == ["rpc-stored-7"]


def test_the_humans_time_does_not_count_against_the_tool_timeout(run, forms_url):
    async def go():
        ui, _ = session_with(deploy_answers(), delay=2.5)
        toolset, registry = await open_forms(forms_url, ui, tool_timeout=2)
        try:
            return await call(registry, ui, "mcp__forms__deploy", {"service": "api"})
        finally:
            await toolset.close()

    result = run(go(), ceiling=30)
    assert not result.is_error, result.content


def test_without_a_provider_no_capability_is_declared_and_the_call_does_not_hang(
        run, forms_url):
    async def go():
        ui = UserInteraction()  # nothing registered: nobody can answer
        toolset, registry = await open_forms(forms_url, ui)
        try:
            return (await call(registry, ui, "mcp__forms__deploy", {"service": "api"}),
                    toolset.connections[0]._elicits)
        finally:
            await toolset.close()

    result, elicits = run(go(), ceiling=30)
    assert elicits is False
    assert result.is_error and result.error["code"] == MCP_TOOL_ERROR
