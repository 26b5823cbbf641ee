"""Sessions of ``dsh acp``: load (replayed), list, close, the model option, provenance, async."""

from __future__ import annotations

import asyncio
import json
import subprocess

from harness.acp_client import DB, WAIT, ask, run, script, started
from harness.dsh_under_test import DSH


async def _turn(conn, session_id: str, text: str = "go"):
    return await asyncio.wait_for(conn.prompt(session_id=session_id,
                                              prompt=[{"type": "text", "text": text}]), WAIT)


@run
async def test_load_replays_the_stored_conversation_before_it_answers(tmp_path):
    model = script(tmp_path, ask(DB), {"content": "SQLite it is"})
    async with started("-m", model) as (conn, client, _):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = asyncio.ensure_future(_turn(conn, session.session_id, "pick a db"))
        _, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        reply.set_result({"action": "accept", "content": {"db": "SQLite"}})
        await turn
    async with started("-m", model) as (conn, client, _):
        await asyncio.wait_for(conn.load_session(cwd=str(tmp_path),
                                                 session_id=session.session_id), WAIT)
        kinds = [u["sessionUpdate"] for u in client.updates]
        assert kinds == ["user_message_chunk", "tool_call", "tool_call_update",
                         "agent_message_chunk"]
        assert client.updates[0]["content"]["text"] == "pick a db"
        assert client.updates[2]["status"] == "completed"
        assert client.text() == "SQLite it is"
        from dsh_cli.store import SessionStore

        with SessionStore.open() as store:  # an agent's dsh mcp session: not one to load here
            agents = store.create_session("mcp:claude-code", agent="claude-code", cwd="/")
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


@run
async def test_answers_through_acp_are_stored_answered_by_the_client(tmp_path):
    model = script(tmp_path, ask(DB), {"content": "ok"})
    async with started("-m", model, name="zed-test") as (conn, client, _):
        session = await conn.new_session(cwd=str(tmp_path))
        turn = asyncio.ensure_future(_turn(conn, session.session_id))
        _, reply = await asyncio.wait_for(client.forms.get(), WAIT)
        reply.set_result({"action": "accept", "content": {"db": "PostgreSQL"}})
        await turn
    shown = subprocess.run([DSH, "history", "--json"], capture_output=True, text=True,
                           timeout=WAIT, check=True)
    [item] = json.loads(shown.stdout)
    assert item["answered_by"] == "zed-test" and item["status"] == "answered"
    plain = subprocess.run([DSH, "history"], capture_output=True, text=True, timeout=WAIT,
                           check=True)
    assert "answered by zed-test" in plain.stdout


@run
async def test_the_model_is_a_config_option(tmp_path):
    first = script(tmp_path, {"content": "first model"}, name="one.json")
    second = script(tmp_path, {"content": "x"}, {"content": "second model"}, name="two.json")
    async with started("-m", first) as (conn, client, _):
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


@run
async def test_an_async_question_sends_its_form_and_the_turn_goes_on(tmp_path):
    batch = ask(DB, delivery="async")
    model = script(tmp_path, batch, {"content": "carrying on"}, {"content": "SQLite, noted"})
    async with started("-m", model) as (conn, client, _):
        session = await conn.new_session(cwd=str(tmp_path))
        reply = await _turn(conn, session.session_id)
        assert reply.stop_reason == "end_turn" and client.text() == "carrying on"
        _, answer = await asyncio.wait_for(client.forms.get(), WAIT)
        answer.set_result({"action": "accept", "content": {"db": "SQLite"}})
        for _ in range(100):
            if (await _history_answered()):
                break
            await asyncio.sleep(0.05)
        await _turn(conn, session.session_id, "and?")
        assert client.text() == "carrying onSQLite, noted"
        stored = subprocess.run([DSH, "sessions", "show", "--json", session.session_id],
                                capture_output=True, text=True, timeout=WAIT, check=True)
        users = [m["content"] for m in json.loads(stored.stdout)["messages"]
                 if m["role"] == "user"]
        assert any("The user answered your async question" in text for text in users)


async def _history_answered() -> bool:
    shown = await asyncio.create_subprocess_exec(DSH, "history", "--json",
                                                 stdout=subprocess.PIPE)
    out, _ = await shown.communicate()
    return any(item["status"] == "answered" for item in json.loads(out or b"[]"))


@run
async def test_a_new_session_stays_loadable_though_nothing_was_said(tmp_path):
    model = script(tmp_path, {"content": "hi"})
    async with started("-m", model) as (conn, _, _process):
        session = await conn.new_session(cwd=str(tmp_path))
    async with started("-m", model) as (conn, client, _):
        await asyncio.wait_for(conn.load_session(cwd=str(tmp_path),
                                                 session_id=session.session_id), WAIT)
        assert client.updates == []
        assert (await _turn(conn, session.session_id)).stop_reason == "end_turn"
