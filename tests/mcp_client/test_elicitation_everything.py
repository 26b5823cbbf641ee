"""``@modelcontextprotocol/server-everything`` (npm, the TypeScript SDK, session era): its
every-type form and its URL elicitation through dsh's seam.

The server registers its elicitation tools only for a client that declares the capability,
so these tests also pin that dsh declares it exactly when a provider can answer.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from dsh_cli.core.errors import ASK_CANCELLED, ASK_DECLINED, UserInteractionError
from dsh_cli.interaction import ScriptedProvider, UserInteraction
from dsh_cli.mcp_client import McpToolset, parse_servers
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.registry import ToolContext

SERVER = (Path(__file__).resolve().parents[1] / "npm" / "node_modules" / "@modelcontextprotocol"
          / "server-everything" / "dist" / "index.js")
FORM, URL = "mcp__everything__trigger-elicitation-request", \
    "mcp__everything__trigger-url-elicitation"


@pytest.fixture
def everything():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the npm servers' tests need Node 20")
    if not SERVER.exists():
        pytest.fail("server-everything is not installed: npm ci --prefix tests/npm")
    return {"command": node, "args": [str(SERVER), "stdio"]}


async def opened(entry, ui):
    configs = parse_servers({"mcpServers": {"everything": entry}}, "t.json", {})
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 (open for the session)
    toolset = await McpToolset.start(configs, errlog=errlog, elicitation=ui)
    registry = ToolRegistry()
    toolset.register(registry)
    return toolset, registry


def raw_result(text: str) -> dict:
    return json.loads(text.split("Raw result:", 1)[1])


def session_with(reply):
    ui = UserInteraction()
    provider = ScriptedProvider([reply])
    ui.register_provider(provider)
    return ui, provider


def every_type_answers(request):
    """Name and e-mail typed, the rest skipped (so their defaults apply), check = Yes."""
    typed = {"name": "Ada Lovelace", "email": "ada@example.com", "check": None}
    answers = []
    for question in request.questions:
        if question.id == "check":
            answers.append({"id": "check", "selected": ["Yes"]})
        elif question.id in typed:
            answers.append({"id": question.id, "custom": typed[question.id]})
        else:
            answers.append({"id": question.id})
    return {"answers": answers}


def run_tool(run, entry, reply, name, arguments=None):
    async def go():
        ui, provider = session_with(reply)
        toolset, registry = await opened(entry, ui)
        try:
            names = {tool.name for tool in toolset.tools}
            ctx = ToolContext(user_interaction=ui, call_id="c1")
            result = await registry.execute(name, arguments or {}, ctx) \
                if name in names else None
            return result, provider, names
        finally:
            await toolset.close()

    return run(go(), ceiling=60)


def test_the_every_type_form_answered_with_defaults_filled(run, everything):
    result, provider, _ = run_tool(run, everything, every_type_answers, FORM)
    assert result is not None and not result.is_error, result
    raw = raw_result(result.content)
    assert raw["action"] == "accept"
    assert raw["content"] == {
        "name": "Ada Lovelace", "check": True, "firstLine": "It was a dark and stormy night.",
        "email": "ada@example.com", "integer": 42, "number": 3.14,
        "untitledSingleSelectEnum": "Monica", "untitledMultipleSelectEnum": ["Guitar"],
        "titledSingleSelectEnum": "hero-1", "titledMultipleSelectEnum": ["fish-1"],
        "legacyTitledEnum": "pet-1"}
    questions = {q.id: q for q in provider.requests[0].questions}
    assert questions["titledSingleSelectEnum"].labels == ["Superman", "Green Lantern",
                                                          "Wonder Woman"]
    assert questions["legacyTitledEnum"].labels[:2] == ["Cats", "Dogs"]


@pytest.mark.parametrize(("code", "action"), [(ASK_DECLINED, "decline"),
                                              (ASK_CANCELLED, "cancel")])
def test_decline_and_cancel_reach_the_server(run, everything, code, action):
    result, _, _ = run_tool(run, everything, UserInteractionError("x", code), FORM)
    assert raw_result(result.content)["action"] == action


def test_the_url_elicitation_opens_only_with_consent(run, everything, capfd):
    # no browser launcher given: Open prints the URL, and dsh fetches nothing
    url = "https://example.com/authorize?x=1"
    result, provider, _ = run_tool(run, everything,
                                   {"answers": [{"id": "open", "selected": ["Open"]}]},
                                   URL, {"url": url, "message": "Authorize the demo"})
    assert result is not None and not result.is_error, result
    assert f"dsh: open this URL in a browser: {url}\n" in capfd.readouterr().err
    (request,) = provider.requests
    assert request.questions[0].labels == ["Open", "Decline"]
    assert "host: >>> example.com <<<" in (request.questions[0].detail or "")
    declined, _, _ = run_tool(run, everything,
                              {"answers": [{"id": "open", "selected": ["Decline"]}]},
                              URL, {"url": url})
    assert "open this URL" not in capfd.readouterr().err
    assert "decline" in declined.content.lower()


def test_without_a_provider_the_server_offers_no_elicitation_tools(run, everything):
    async def go():
        toolset, _ = await opened(everything, UserInteraction())
        try:
            return {tool.name for tool in toolset.tools}
        finally:
            await toolset.close()

    names = run(go(), ceiling=60)
    assert FORM not in names and URL not in names and "mcp__everything__echo" in names
