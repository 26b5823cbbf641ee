"""Sessions of ``dsh acp``: load (replayed), list, close, the model option, provenance, async."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from harness.acp_client import DB, WAIT, ask, run, script, started
from harness.acp_shared import rescript, shared_agent
from harness.dsh_under_test import DSH, own_home_env


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """One ``dsh acp`` of the client "zed-test" (its own DSH_HOME) for the tests whose agent's
    start and end are not their subject: each opens its own session, its script given first
    (``rescript``), and reads the store by that session's id."""
    folder = tmp_path_factory.mktemp("acp-sessions")
    env = own_home_env(folder / "home")
    with shared_agent("-m", script(folder, {"content": "hi"}), env=env,
                      name="zed-test") as shared:
        yield shared


async def _turn(conn, session_id: str, text: str = "go"):
    return await asyncio.wait_for(conn.prompt(session_id=session_id,
                                              prompt=[{"type": "text", "text": text}]), WAIT)


def test_load_replays_the_stored_conversation_before_it_answers(tmp_path, agent):
    turns = (ask(DB), {"content": "SQLite it is"})

    @run
    async def told():  # by an agent of its own, in the shared agent's DSH_HOME
        async with started("-m", script(tmp_path, *turns), env=agent.env) as (conn, client, _):
            session = await conn.new_session(cwd=str(tmp_path))
            turn = asyncio.ensure_future(_turn(conn, session.session_id, "pick a db"))
            _, reply = await asyncio.wait_for(client.forms.get(), WAIT)
            reply.set_result({"action": "accept", "content": {"db": "SQLite"}})
            await turn
        return session

    session = told()
    store = Path(agent.env["DSH_HOME"]) / "sessions.db"

    async def body(conn, client):  # loaded by another process: from the store
        await asyncio.wait_for(conn.load_session(cwd=str(tmp_path),
                                                 session_id=session.session_id), WAIT)
        kinds = [u["sessionUpdate"] for u in client.updates]
        assert kinds == ["user_message_chunk", "tool_call", "tool_call_update",
                         "agent_message_chunk"]
        assert client.updates[0]["content"]["text"] == "pick a db"
        assert client.updates[2]["status"] == "completed"
        assert client.text() == "SQLite it is"
        from dsh_cli.store import SessionStore

        # an agent's dsh mcp session: not one to load here
        with SessionStore.open(store) as opened:
            agents = opened.create_session("mcp:claude-code", agent="claude-code", cwd="/")
        listed = await conn.list_sessions()
        assert session.session_id in [s.session_id for s in listed.sessions]
        assert agents not in [s.session_id for s in listed.sessions]
        await conn.close_session(session_id=session.session_id)
        gone = asyncio.ensure_future(_turn(conn, session.session_id))
        try:
            await gone
        except Exception as error:  # the SDK raises the JSON-RPC error
            assert getattr(error, "code", None) == -32602
            assert error.data["code"] == "SESSION_NOT_FOUND"
        else:
            raise AssertionError("a closed session took a prompt")


def test_answers_through_acp_are_stored_answered_by_the_client(tmp_path, agent):
    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = asyncio.ensure_future(_turn(conn, session.session_id))
        _, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        reply.set_result({"action": "accept", "content": {"db": "PostgreSQL"}})
        await turn
        return session.session_id

    rescript(agent.model, ask(DB), {"content": "ok"})
    session_id = agent.run(body)
    shown = subprocess.run([DSH, "history", "--json", "--session", session_id],
                           capture_output=True, text=True, timeout=WAIT, check=True,
                           env=agent.env)
    [item] = json.loads(shown.stdout)
    assert item["answered_by"] == "zed-test" and item["status"] == "answered"
    plain = subprocess.run([DSH, "history", "--session", session_id], capture_output=True,
                           text=True, timeout=WAIT, check=True, env=agent.env)
    assert "answered by zed-test" in plain.stdout


def test_the_model_is_a_config_option(tmp_path, agent):
    first = agent.model
    second = script(tmp_path, {"content": "x"}, {"content": "second model"}, name="two.json")

    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        [option] = session.config_options
        assert option.id == "model" and option.current_value == first
        await _turn(conn, session.session_id)
        changed = await conn.set_config_option(config_id="model", session_id=session.session_id,
                                               value=second)
        assert changed.config_options[0].current_value == second
        await _turn(conn, session.session_id)
        assert client.text() == "first modelsecond model"
        try:
            await conn.set_config_option(config_id="model", session_id=session.session_id,
                                         value="script:/no/such/file.json")
        except Exception as error:
            assert getattr(error, "code", None) == -32602
        else:
            raise AssertionError("a model that cannot be used was accepted")

    rescript(first, {"content": "first model"})
    agent.run(body)


def test_an_async_question_sends_its_form_and_the_turn_goes_on(tmp_path, agent):
    store = Path(agent.env["DSH_HOME"]) / "sessions.db"

    async def body(conn, client):
        session = await conn.new_session(cwd=str(tmp_path))
        reply = await _turn(conn, session.session_id)
        assert reply.stop_reason == "end_turn" and client.text() == "carrying on"
        _, answer = await asyncio.wait_for(client.forms.get(), WAIT)
        answer.set_result({"action": "accept", "content": {"db": "SQLite"}})
        for _ in range(100):
            if _answered(store, session.session_id):
                break
            await asyncio.sleep(0.05)
        await _turn(conn, session.session_id, "and?")
        assert client.text() == "carrying onSQLite, noted"
        return session.session_id

    rescript(agent.model, ask(DB, delivery="async"), {"content": "carrying on"},
             {"content": "SQLite, noted"})
    session_id = agent.run(body)
    stored = subprocess.run([DSH, "sessions", "show", "--json", session_id],
                            capture_output=True, text=True, timeout=WAIT, check=True,
                            env=agent.env)
    users = [m["content"] for m in json.loads(stored.stdout)["messages"]
             if m["role"] == "user"]
    assert any("The user answered your async question" in text for text in users)


def _answered(path: Path, session_id: str) -> bool:
    """Whether the session's question is stored answered (read in process, not by a child)."""
    from dsh_cli.store import SessionStore

    with SessionStore.open(path) as store:
        return any(item.status == "answered"
                   for item in store.question_history(session=session_id))


def test_a_new_session_stays_loadable_though_nothing_was_said(tmp_path, agent):
    @run
    async def opened():  # by an agent of its own, in the shared agent's DSH_HOME
        async with started("-m", script(tmp_path, {"content": "hi"}), env=agent.env) as (
                conn, _, _process):
            return await conn.new_session(cwd=str(tmp_path))

    session = opened()

    async def body(conn, client):  # loaded by another process: from the store
        await asyncio.wait_for(conn.load_session(cwd=str(tmp_path),
                                                 session_id=session.session_id), WAIT)
        assert client.updates == []
        assert (await _turn(conn, session.session_id)).stop_reason == "end_turn"

    rescript(agent.model, {"content": "hi"})
    agent.run(body)
