"""dsh's MCP client as the conformance suite's client under test.

``@modelcontextprotocol/conformance client --command "python dsh_client.py" --scenario S``
starts a server and runs this with its URL as the last argument and the scenario in
``MCP_CONFORMANCE_SCENARIO``. Everything goes through dsh's own client
(``dsh_cli.mcp_client``): the connection, the tools as the model sees them, and elicitation
answered through a real ``UserInteraction`` whose human skips every question, so a form's
defaults are what is sent (scenario ``elicitation-sep1034-client-defaults``). A call that
ends in ``MCP_AUTH_REQUIRED`` is followed by what its user would do: ``dsh mcp login``'s
flow, then the same call once more (``auth/scope-step-up``). What each tool call returned
goes to stderr, which the suite keeps (``stderr.txt`` of ``-o DIR``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from dsh_cli.interaction import ScriptedProvider, UserInteraction
from dsh_cli.mcp_client import McpToolset, parse_servers
from dsh_cli.mcp_client.tool import tool_name
from dsh_cli.tools import ToolRegistry
from dsh_cli.tools.registry import ToolContext

# scenarios whose server judges what happens while each of its tools (no arguments) runs
CALL_EVERY_TOOL = ("elicitation-sep1034-client-defaults", "sse-retry")


class SchemaOf(str):
    """An argument the model fills in from what it sees: this tool's offered parameters."""


# what a model calls in each scenario: the server's tool, and the arguments its description
# asks for (a scenario whose context lists ``toolCalls``, http-custom-headers, adds those)
CALLS: dict[str, list[tuple[str, dict[str, object]]]] = {
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "auth/scope-step-up": [("test-tool", {})],
    "http-invalid-tool-headers": [("valid_tool", {"region": "us-west1"})],
    "json-schema-2020-12-preservation": [
        ("json_schema_echo", {"schema": SchemaOf("json_schema_2020_12_tool")})],
    "sep-2322-client-request-state": [(tool, {}) for tool in (
        "test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated",
        "test_mrtr_no_result_type")],
}
PROTOCOL = "DSH_CONFORMANCE_PROTOCOL"  # the server entry's "protocol" (the suite passes env on)
SECRET = "DSH_CONFORMANCE_CLIENT_SECRET"  # the entry's oauth.client_secret_env
KEY = "DSH_CONFORMANCE_PRIVATE_KEY"  # the entry's oauth.private_key_env
ASSERTION = "DSH_CONFORMANCE_ASSERTION"  # the entry's oauth.assertion_env
ID_TOKEN = "DSH_CONFORMANCE_ID_TOKEN"  # the entry's oauth.id_token_env
# the suite's convention for the client under test's metadata document (auth/basic-cimd)
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def oauth_entry(scenario: str, url: str) -> dict[str, object]:
    """The ``oauth`` keys a user would write for this scenario's client (suite's context)."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("valid_jwt"):  # workload identity: the CI job's token, for its issuer
        os.environ[ASSERTION] = context["valid_jwt"]
        return {"client_id": context["client_id"], "assertion_env": ASSERTION,
                "issuer": audience_of(context["valid_jwt"])}
    if context.get("idp_id_token"):  # enterprise-managed: the user's ID token at the IdP
        os.environ[ID_TOKEN] = context["idp_id_token"]
        os.environ[SECRET] = context["client_secret"]
        return {"client_id": context["client_id"], "client_secret_env": SECRET,
                "issuer": authorization_server_of(url), "id_token_env": ID_TOKEN,
                "idp_token_endpoint": context["idp_token_endpoint"],
                "idp_client_id": context["idp_client_id"]}
    if context.get("client_secret"):
        os.environ[SECRET] = context["client_secret"]
        return {"client_id": context["client_id"], "client_secret_env": SECRET}
    if context.get("private_key_pem"):
        os.environ[KEY] = context["private_key_pem"]
        return {"client_id": context["client_id"], "private_key_env": KEY,
                "signing_algorithm": context.get("signing_algorithm", "RS256")}
    if scenario == "auth/basic-cimd":
        return {"client_metadata_url": CLIENT_METADATA_URL}
    return {"client_id": context["client_id"]} if context.get("client_id") else {}


def audience_of(jwt: str) -> str:
    """The authorization server a workload's token is for: its ``aud``, which the user asked
    the platform for and so writes as ``oauth.issuer`` (the signature is the server's)."""
    import base64

    payload = jwt.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return claims["aud"] if isinstance(claims["aud"], str) else claims["aud"][0]


def authorization_server_of(url: str) -> str:
    """The authorization server the MCP server names (RFC 9728 metadata), which the user
    looks up once and writes as ``oauth.issuer``: dsh itself never asks the server."""
    import httpx2

    parts = urlsplit(url)
    document = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    return str(httpx2.get(document, timeout=30).json()["authorization_servers"][0])


async def follow(url: str) -> None:
    """The browser of a human who approves: the suite's authorization server redirects to
    dsh's callback at once, so following the redirects is the whole login (tests only)."""
    import httpx2

    async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as browser:
        await browser.get(url)


async def log_in_if_asked(servers: list, auth_dir: Path) -> None:
    """What a user does after ``MCP_AUTH_REQUIRED``: ``dsh mcp login server`` (its flow)."""
    oauth = servers[0].oauth
    if oauth.browserless:  # a secret, a key or an assertion: no browser
        return
    with tempfile.TemporaryFile("w+") as errlog:
        probe = await McpToolset.start(servers, errlog=errlog, auth_dir=auth_dir)
        await probe.close()
    if probe.statuses[0].code == "MCP_AUTH_REQUIRED":
        await log_in_again(servers, auth_dir)


async def log_in_again(servers: list, auth_dir: Path) -> None:
    """``dsh mcp login server``, its failure said in its one line."""
    from dsh_cli.mcp_client.login import LoginFailed, log_in

    try:
        await log_in(servers[0], auth_dir, show=lambda url: None, browse=follow, timeout=30)
    except LoginFailed as error:
        print(f"dsh: {error.code}: {error.message}", file=sys.stderr)


def scenario_calls(scenario: str, registry: ToolRegistry) -> list[tuple[str, object]]:
    """The scenario's calls by model-facing name, each ``SchemaOf`` filled in from the
    ``tools`` entries dsh gives the model (what it would copy)."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    asked = [(call["name"], call.get("arguments") or {}) for call in context.get("toolCalls", [])]
    offered = {spec["function"]["name"]: spec["function"]["parameters"]
               for spec in registry.specs()}
    calls: list[tuple[str, object]] = []
    for tool, arguments in [*CALLS.get(scenario, []), *asked]:
        filled = {key: offered.get(tool_name("server", value)) if isinstance(value, SchemaOf)
                  else value for key, value in arguments.items()}
        calls.append((tool_name("server", tool), filled))
    if scenario in CALL_EVERY_TOOL:
        calls += [(name, {}) for name in registry.names]
    return calls


def skip_everything(context: object) -> dict[str, object]:
    """The human skips every question of the batch: the seam answers with the defaults."""
    request = getattr(context, "request", context)  # the batch (ScriptedProvider passes it)
    return {"answers": [{"id": question.id, "selected": []} for question in request.questions]}


async def main(url: str, scenario: str) -> int:
    ui = UserInteraction()
    ui.register_provider(ScriptedProvider(skip_everything))
    # the entry a user would write: the era is negotiated (2026-07-28 probe, then the
    # session era these servers speak) unless the test asks for "protocol": "legacy"
    entry = {"type": "http", "url": url, "protocol": os.environ.get(PROTOCOL, "auto"),
             "oauth": oauth_entry(scenario, url)}
    servers = parse_servers({"mcpServers": {"server": entry}}, "conformance", {})
    # the config directory (logins), gone with the run
    with tempfile.TemporaryDirectory(prefix="dsh-conformance-") as folder:
        return await _calls(servers, scenario, ui, Path(folder))


async def _calls(servers, scenario: str, ui, auth_dir: Path) -> int:
    """Log in where the scenario asks, then make its calls; 1 when one failed."""
    failed = 0
    if scenario.startswith("auth/"):
        await log_in_if_asked(servers, auth_dir)
    with tempfile.TemporaryFile("w+") as errlog:
        toolset = await McpToolset.start(servers, errlog=errlog, elicitation=ui,
                                         report=lambda line: print(line, file=sys.stderr),
                                         auth_dir=auth_dir)
        try:
            if not toolset.connections:
                return 1
            registry = ToolRegistry()
            toolset.register(registry)
            names = [tool.name for tool in toolset.tools]
            print("tools:", ", ".join(names), file=sys.stderr)
            for name, arguments in scenario_calls(scenario, registry):
                ctx = ToolContext(user_interaction=ui, call_id=f"call_{name}")
                result = await registry.execute(name, arguments, ctx)
                print(f"{name}: {result.content[:300]}", file=sys.stderr)
                if (result.error or {}).get("code") == "MCP_AUTH_REQUIRED":
                    # the user runs the login the line names, then has the call made again
                    await log_in_again(servers, auth_dir)
                    result = await registry.execute(name, arguments, ctx)
                    print(f"{name}: {result.content[:300]}", file=sys.stderr)
                failed += result.is_error
        finally:
            await toolset.close()
    return 1 if failed else 0  # a failed call is the suite's "client exited with error"


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))))
