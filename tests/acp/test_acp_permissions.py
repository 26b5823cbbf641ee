"""Permission requests of ``dsh acp`` as ``session/request_permission``, by the SDK's client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from harness.acp_client import WAIT, prompt_turn, run, script, started
from harness.acp_shared import rescript, shared_agent
from harness.dsh_under_test import own_home_env
from harness.http_fake import served

NOTES = str(Path(__file__).parents[1] / "fakes" / "mcp_notes_server.py")


def _write(call_id: str, text: str) -> dict:
    return {"tool_calls": [{"id": call_id, "name": "mcp__notes__write_note",
                            "arguments": {"text": text}}]}


@pytest.fixture(scope="module")
def notes_config(tmp_path_factory):
    """An ``--mcp-config`` naming the notes server over HTTP, one per module: the sessions
    that write notes call it rather than each starting a stdio server of its own."""
    path = tmp_path_factory.mktemp("acp-notes") / "mcp.json"
    with served("mcp_notes_server.py") as url:
        path.write_text(json.dumps({"mcpServers": {"notes": {"type": "http", "url": url}}}))
        yield str(path)


def _results(client) -> dict[str, dict]:
    return {u["toolCallId"]: u for u in client.of("tool_call_update") if "status" in u}


def _two_writes_script(folder: Path) -> str:
    return script(folder, _write("one", "a"), _write("two", "b"), {"content": "done"})


@pytest.fixture(scope="module")
def writer(tmp_path_factory, notes_config):
    """One ``dsh acp`` with the notes server whose every session writes two notes: the tests
    that vary only the client's answer each open a session on it (its own DSH_HOME)."""
    folder = tmp_path_factory.mktemp("acp-writer")
    env = own_home_env(folder / "home")
    with shared_agent("-m", _two_writes_script(folder), "--mcp-config", notes_config,
                      env=env) as agent:
        yield agent


async def _answer_two_writes(conn, client, cwd: str, option: str):
    """Two write_note calls in one turn; the first request answered with ``option``."""
    session = await conn.new_session(cwd=cwd)
    turn = prompt_turn(conn, session.session_id)
    request, reply = await asyncio.wait_for(client.permissions.get(), WAIT)
    assert request["sessionId"] == session.session_id
    assert request["toolCall"]["toolCallId"] == "one"
    assert [(o["optionId"], o["kind"]) for o in request["options"]] == [
        ("allow_once", "allow_once"), ("allow_session", "allow_always"),
        ("allow_always", "allow_always"), ("deny", "reject_once")]
    assert len({o["name"] for o in request["options"]}) == 4
    reply.set_result({"outcome": {"outcome": "selected", "optionId": option}})
    asked_again = False
    while not turn.done():
        getter = asyncio.ensure_future(client.permissions.get())
        await asyncio.wait({turn, getter}, timeout=WAIT,
                           return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            asked_again = True
            getter.result()[1].set_result(
                {"outcome": {"outcome": "selected", "optionId": "allow_once"}})
        else:
            getter.cancel()
    return (await turn).stop_reason, _results(client), asked_again


async def _two_writes_alone(tmp_path, option: str, config: str):
    """``_answer_two_writes`` on a ``dsh acp`` of its own, with the test's DSH_HOME."""
    model = _two_writes_script(tmp_path)
    async with started("-m", model, "--mcp-config", config) as (conn, client, _):
        return await _answer_two_writes(conn, client, str(tmp_path), option)


@pytest.mark.parametrize(("option", "again"), [("allow_once", True),
                                               ("allow_session", False),
                                               ("allow_always", False)])
def test_allow_once_asks_again_session_and_always_do_not(tmp_path, writer, notes_config,
                                                        option, again):
    if option == "allow_always":  # kept in DSH_HOME: the shared agent's later sessions would
        reason, results, asked_again = run(_two_writes_alone)(  # not ask
            tmp_path, option, notes_config)
    else:
        reason, results, asked_again = writer.run(
            lambda conn, client: _answer_two_writes(conn, client, str(tmp_path), option))
    assert reason == "end_turn"
    assert results["one"]["status"] == "completed" and results["two"]["status"] == "completed"
    assert asked_again is again


def test_deny_is_permission_denied(tmp_path, writer):
    reason, results, _ = writer.run(
        lambda conn, client: _answer_two_writes(conn, client, str(tmp_path), "deny"))
    assert reason == "end_turn"
    assert results["one"]["rawOutput"]["code"] == "PERMISSION_DENIED"


def test_a_cancelled_outcome_cancels_the_turn_not_a_denial(tmp_path, writer):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        _, reply = await asyncio.wait_for(client.permissions.get(), WAIT)
        reply.set_result({"outcome": {"outcome": "cancelled"}})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        assert _results(client)["one"]["rawOutput"]["code"] == "ASK_ABORTED"

    writer.run(body)


@run
async def test_the_clients_own_mcp_servers_ask_the_same_way(tmp_path):
    model = script(tmp_path, _write("one", "a"), {"content": "done"})
    async with started("-m", model) as (conn, client, _):
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[
            {"name": "notes", "command": sys.executable, "args": [NOTES], "env": []}])
        turn = prompt_turn(conn, session.session_id)
        request, reply = await asyncio.wait_for(client.permissions.get(), WAIT)
        assert request["toolCall"]["title"] == "mcp__notes__write_note (notes)"
        reply.set_result({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        assert "saved note 1: a" in _results(client)["one"]["content"][0]["content"]["text"]


FORMS = "mcp_forms_server.py"
RAW = str(Path(__file__).parents[1] / "mcp_client" / "raw_form_server.py")
# no display: an agreed page is printed on stderr, never a browser launched by a test
NO_DISPLAY = ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")


@pytest.fixture(scope="module")
def raw_url():
    """The raw server over HTTP, one per module: its sessions call it, none starts its own."""
    with served(RAW) as url:
        yield url


@pytest.fixture(scope="module")
def form_client_agent(tmp_path_factory, raw_url):
    """One ``dsh acp --yes`` for a client with forms only (no display), with the forms and
    raw servers over HTTP: each test opens a session on it, its script given first."""
    folder = tmp_path_factory.mktemp("acp-forms")
    config = folder / "servers.json"
    env = {key: value for key, value in own_home_env(folder / "home").items()
           if key not in NO_DISPLAY}
    with served(FORMS) as forms_url:
        config.write_text(json.dumps({"mcpServers": {
            "forms": {"type": "http", "url": forms_url},
            "raw": {"type": "http", "url": raw_url}}}))
        with shared_agent("-m", script(folder, {"content": "hi"}), "--mcp-config",
                          str(config), "--yes", env=env) as agent:
            yield agent


def test_an_mcp_servers_elicitation_reaches_the_client_as_a_form(tmp_path, form_client_agent):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        form, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        assert form["toolCallId"] == "rn" and form["message"].startswith("forms asks")
        properties = form["requestedSchema"]["properties"]
        name = next(key for key, spec in properties.items() if spec["title"] == "New name")
        reply.set_result({"action": "accept", "content": {name: "svc-two"}})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        text = _results(client)["rn"]["content"][0]["content"]["text"]
        assert json.loads(text)["rename"]["accept"]["name"] == "svc-two"

    rescript(form_client_agent.model,
             {"tool_calls": [{"id": "rn", "name": "mcp__forms__rename", "arguments": {}}]},
             {"content": "renamed"})
    form_client_agent.run(body)


def test_an_mcp_servers_url_request_is_dshs_consent_question_as_a_form(tmp_path,
                                                                       form_client_agent):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        form, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        schema = form["requestedSchema"]
        [(key, consent)] = schema["properties"].items()  # no "Other": Open or Decline only
        assert [c["const"] for c in consent["oneOf"]] == ["Open", "Decline"]
        assert schema["required"] == [key]
        assert "https://example.com/x" in consent["description"]
        reply.set_result({"action": "accept", "content": {key: "Open"}})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        text = _results(client)["op"]["content"][0]["content"]["text"]
        assert json.loads(text)["u"]["action"] == "accept"

    rescript(form_client_agent.model,
             {"tool_calls": [{"id": "op", "name": "mcp__raw__open",
                              "arguments": {"url": "https://example.com/x"}}]},
             {"content": "opened"})
    form_client_agent.run(body)


@pytest.fixture(scope="module")
def url_client_agent(tmp_path_factory, raw_url):
    """One ``dsh acp`` for a client with URL mode, whose every session opens a URL at the raw
    server: the cases that vary only the client's reply each open a session on it."""
    folder = tmp_path_factory.mktemp("acp-url")
    config = folder / "raw.json"
    model = script(folder, {"tool_calls": [{"id": "op", "name": "mcp__raw__open",
                                            "arguments": {"url": "https://example.com/x"}}]},
                   {"content": "done"})
    config.write_text(json.dumps({"mcpServers": {"raw": {"type": "http", "url": raw_url}}}))
    env = own_home_env(folder / "home")
    with shared_agent("-m", model, "--mcp-config", str(config), "--yes", url=True,
                      env=env) as agent:
        yield agent


@pytest.mark.parametrize("action", ["accept", "decline"])
def test_a_client_with_url_mode_gets_the_url_request_itself(tmp_path, url_client_agent,
                                                             action):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        form, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        # dsh's own id (two servers may use the same one; a 2026-07-28 round carries none)
        assert isinstance(form.pop("elicitationId"), str)
        assert form == {"sessionId": session.session_id, "mode": "url", "toolCallId": "op",
                        "message": "raw asks: Sign in to continue",
                        "url": "https://example.com/x"}
        reply.set_result({"action": action})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        text = _results(client)["op"]["content"][0]["content"]["text"]
        assert json.loads(text)["u"]["action"] == action

    url_client_agent.run(body)


PAGES = str(Path(__file__).parents[1] / "fakes" / "mcp_url_server.py")


@run
async def test_a_servers_completion_of_a_url_request_reaches_the_client(tmp_path):
    config = tmp_path / "pages.json"
    config.write_text(json.dumps({"mcpServers": {
        "pages": {"command": sys.executable, "args": [PAGES], "protocol": "legacy"}}}))
    model = script(tmp_path, {"tool_calls": [{"id": "in", "name": "mcp__pages__sign_in",
                                              "arguments": {"url": "https://example.com/in"}}]},
                   {"content": "signed in"})
    async with started("-m", model, "--mcp-config", str(config), "--yes", url=True) as (
            conn, client, _):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        form, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        assert form["mode"] == "url" and form["url"] == "https://example.com/in"
        assert form["toolCallId"] == "in"
        reply.set_result({"action": "accept"})
        # the server's "e7" done, under the id the client was given
        assert await asyncio.wait_for(client.completed.get(), WAIT) == form["elicitationId"]
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        assert "accept" in _results(client)["in"]["content"][0]["content"]["text"]
        assert client.completed.empty()  # once; an id never asked is dropped
