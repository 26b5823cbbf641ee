"""``dsh acp`` driven by the SDK's client: text turns, tool calls, questions as forms."""

from __future__ import annotations

import asyncio
import json

import pytest
from harness.acp_client import DB, FEATURES, WAIT, ask, prompt_turn, run, script, started
from harness.acp_shared import rescript, shared_agent
from harness.dsh_under_test import own_home_env


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """One ``dsh acp`` for the tests whose agent's start and end are not their subject: each
    opens its own session on it (its own DSH_HOME), its script given first (``rescript``)."""
    folder = tmp_path_factory.mktemp("acp-turns")
    env = own_home_env(folder / "home")
    with shared_agent("-m", script(folder, {"content": "hi"}), env=env) as shared:
        yield shared


@pytest.fixture
def asker(agent):
    """The shared agent, its next session asking DB, then saying "ok": for the tests that
    vary only the client's reply to that form."""
    rescript(agent.model, ask(DB), {"content": "ok"})
    return agent


def test_a_text_turn_streams_chunks_and_ends_the_turn(tmp_path, agent):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        reply = await asyncio.wait_for(conn.prompt(
            session_id=session.session_id, prompt=[{"type": "text", "text": "hi"}]), WAIT)
        assert reply.stop_reason == "end_turn"
        assert client.text() == "hello from dsh"
        assert len(client.of("agent_message_chunk")) == 3  # streamed word by word

    rescript(agent.model, {"content": "hello from dsh"})
    agent.run(body)


def _tool_results(client) -> list[dict]:
    return [u for u in client.of("tool_call_update") if "status" in u]


def test_a_batch_is_one_form_and_its_answer_the_tool_result(tmp_path, agent):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        form, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        assert form["mode"] == "form" and form["sessionId"] == session.session_id
        assert form["toolCallId"] == "ask"
        schema = form["requestedSchema"]
        db = schema["properties"]["db"]
        assert db["type"] == "string" and db["title"] == "Database"
        assert db["description"] == "Which database?"
        assert db["oneOf"][0] == {"const": "PostgreSQL", "title": "PostgreSQL",
                                  "description": "the server one"}
        features = schema["properties"]["features"]
        assert features["type"] == "array"
        assert [c["const"] for c in features["items"]["anyOf"]] == ["CI", "Auth", "Docs"]
        assert schema["properties"]["db__other"]["type"] == "string"
        assert "required" not in schema
        assert schema["_meta"]["dsh/questions"]["db"]["previews"] == {"SQLite": "file: app.db"}
        reply.set_result({"action": "accept",
                          "content": {"db": "SQLite", "features": ["CI", "Docs"]}})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        started_call = client.of("tool_call")[0]
        assert started_call["toolCallId"] == "ask" and started_call["title"] == "ask_user_question"
        result = _tool_results(client)[-1]
        assert result["status"] == "completed"
        answer = result["content"][0]["content"]["text"]
        assert '"selected":["SQLite"]' in answer and '"selected":["CI","Docs"]' in answer
        assert client.text() == "done"

    rescript(agent.model, ask(DB, FEATURES), {"content": "done"})
    agent.run(body)


def test_other_text_answers_through_the_companion_field(tmp_path, asker):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        _, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        reply.set_result({"action": "accept", "content": {"db__other": "DuckDB"}})
        await asyncio.wait_for(turn, WAIT)
        text = _tool_results(client)[-1]["content"][0]["content"]["text"]
        assert '"custom":"DuckDB"' in text

    asker.run(body)


@pytest.mark.parametrize(("content", "why"), [
    ({"db": "MySQL"}, "MySQL"),  # a value outside the options
    ({"db": 3}, "expected a string"),  # a wrong type
    ({"db": ["SQLite"]}, "expected a string"),
    ({"bogus": "x"}, "not a field"),
])
def test_an_invalid_form_answer_is_invalid_answer_never_a_guess(tmp_path, asker, content,
                                                                why):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        _, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        reply.set_result({"action": "accept", "content": content})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        result = _tool_results(client)[-1]
        assert result["status"] == "failed"
        assert result["rawOutput"]["code"] == "INVALID_ANSWER"
        assert why in result["rawOutput"]["message"]

    asker.run(body)


@pytest.mark.parametrize(("action", "code"), [("decline", "ASK_DECLINED"),
                                              ("cancel", "ASK_CANCELLED")])
def test_decline_and_cancel_are_the_seams_codes(tmp_path, asker, action, code):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        _, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        reply.set_result({"action": action})
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        assert _tool_results(client)[-1]["rawOutput"]["code"] == code

    asker.run(body)


@run
async def test_a_client_without_forms_gets_no_provider_at_once(tmp_path):
    model = script(tmp_path, ask(DB), {"content": "I will ask in prose then"})
    async with started("-m", model, form=False) as (conn, client, _):
        session = await conn.new_session(cwd=str(tmp_path))
        reply = await asyncio.wait_for(conn.prompt(
            session_id=session.session_id, prompt=[{"type": "text", "text": "go"}]), WAIT)
        assert reply.stop_reason == "end_turn"
        assert client.forms.empty()
        assert _tool_results(client)[-1]["rawOutput"]["code"] == "NO_PROVIDER"
        assert client.text() == "I will ask in prose then"


def test_session_cancel_aborts_the_pending_form_and_ends_cancelled(tmp_path, asker):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = prompt_turn(conn, session.session_id)
        await asyncio.wait_for(client.forms.get(), WAIT)
        await conn.cancel(session_id=session.session_id)
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "cancelled"
        result = _tool_results(client)[-1]
        assert result["rawOutput"]["code"] == "ASK_ABORTED"
        assert "ACP-side cancellation" in result["rawOutput"]["message"]
        assert client.text() == ""  # the turn's "ok" never said

    asker.run(body)


@run
async def test_a_client_without_forms_is_answered_from_an_answers_file_when_given(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"db": {"selected": ["SQLite"]}}))
    model = script(tmp_path, ask(DB), {"content": "ok"})
    async with started("-m", model, "--answers", str(answers), form=False) as (conn, client, _):
        session = await conn.new_session(cwd=str(tmp_path))
        await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                           prompt=[{"type": "text", "text": "go"}]), WAIT)
        assert client.forms.empty()
        text = _tool_results(client)[-1]["content"][0]["content"]["text"]
        assert '"selected":["SQLite"]' in text
