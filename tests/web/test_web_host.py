"""Settlement through the routes: first valid response wins, refusals keep it pending."""

from __future__ import annotations

import asyncio
import io

import pytest
from harness.web_site import ANSWERS, request, until

from dsh_cli.interaction import UserInteraction, UserInteractionError
from dsh_cli.providers.web import WebHost


def answer(site, rpc_id, answers=ANSWERS, session_id="s1"):
    return site.post("/api/respond", {"type": "question/answer", "rpc_id": rpc_id,
                                      "session_id": session_id, "answers": answers})


async def asked(site, batch=None):
    """Start an ask; returns (task, rpc_id) once the batch is pending."""
    task = asyncio.ensure_future(site.ui.ask(request(batch)))
    await until(lambda: len(site.ui.pending) == 1)
    (event,) = site.ui.pending.replay()
    return task, event.rpc_id


def test_a_valid_answer_settles_the_ask_and_a_duplicate_is_not_pending(serve):
    async def scenario(site):
        resolved = []
        site.ui.events.subscribe(lambda e: resolved.append(e.to_json())
                                 if e.type == "question/resolved" else None)
        task, rpc_id = await asked(site)
        reply = await answer(site, rpc_id)
        assert reply.status == 200
        assert reply.json() == {"type": "response/ack", "rpc_id": rpc_id, "accepted": True}
        result = await task
        assert result.to_json() == {"answers": ANSWERS}
        assert resolved == [{"type": "question/resolved", "rpc_id": rpc_id,
                             "outcome": "answered", "answer": {"answers": ANSWERS}}]
        late = (await answer(site, rpc_id)).json()
        assert late["accepted"] is False and late["reason"] == "not-pending"

    serve(scenario)


def test_a_bad_response_is_refused_and_the_batch_stays_pending(serve):
    async def scenario(site):
        task, rpc_id = await asked(site)
        bad = [{"id": "db", "selected": ["MySQL"]}, {"id": "name", "selected": []}]
        reply = (await answer(site, rpc_id, bad)).json()
        assert reply["accepted"] is False and reply["reason"] == "bad-response"
        assert "MySQL" in reply["message"]
        not_a_list = await answer(site, rpc_id, "SQLite")  # a mistyped field: as in the relay
        assert not_a_list.status == 400 and not_a_list.json()["code"] == "BAD_FRAME"
        assert not task.done() and len(site.ui.pending) == 1
        assert (await answer(site, rpc_id)).json()["accepted"] is True
        assert (await task).answers[0].selected == ["SQLite"]

    serve(scenario)


def test_another_sessions_response_is_refused_and_stays_pending(serve):
    async def scenario(site):
        task, rpc_id = await asked(site)
        reply = (await answer(site, rpc_id, session_id="s2")).json()
        assert reply["reason"] == "wrong-session"
        assert not task.done()
        assert (await answer(site, rpc_id)).json()["accepted"] is True
        await task

    serve(scenario)


def test_cancel_is_ask_cancelled_and_an_unknown_cancel_is_not_pending(serve):
    async def scenario(site):
        task, rpc_id = await asked(site)
        unknown = (await site.post("/api/respond", {"type": "question/cancel", "rpc_id": "q_0"}))
        assert unknown.json()["reason"] == "not-pending"
        reply = await site.post("/api/respond", {"type": "question/cancel", "rpc_id": rpc_id,
                                                 "session_id": "s1"})
        assert reply.json()["accepted"] is True
        with pytest.raises(UserInteractionError) as caught:
            await task
        assert caught.value.code == "ASK_CANCELLED"

    serve(scenario)


def test_two_simultaneous_answers_one_wins(serve):
    async def scenario(site):
        task, rpc_id = await asked(site)
        replies = await asyncio.gather(*(answer(site, rpc_id) for _ in range(4)))
        accepted = [reply.json()["accepted"] for reply in replies]
        assert accepted.count(True) == 1
        assert {r.json().get("reason") for r in replies if not r.json()["accepted"]} == {
            "not-pending"}
        await task

    serve(scenario)


def test_malformed_bodies_are_bad_frames(serve):
    async def scenario(site):
        for body in (b"not json", b"[1]", {"type": "question/answer"},
                     {"type": "questions/replay", "rpc_id": "q"}, {"rpc_id": 3}):
            reply = await site.post("/api/respond", body)
            assert reply.status == 400, body
            assert reply.json()["code"] == "BAD_FRAME"

    serve(scenario)


def test_events_replay_pending_batches_on_every_connect(serve):
    async def scenario(site):
        task, rpc_id = await asked(site)
        for _ in range(2):  # a reconnect gets the same batch, same rpc_id
            first, done = await site.events(2)
            assert first["type"] == "question/requested"
            assert first["rpc_id"] == rpc_id and first["session_id"] == "s1"
            assert first["questions"][0]["options"][0]["label"] == "PostgreSQL (Recommended)"
            assert done == {"type": "replay/done", "pending": [rpc_id]}
        await answer(site, rpc_id)
        await task
        (done,) = await site.events(1)
        assert done == {"type": "replay/done", "pending": []}

    serve(scenario)


def test_live_events_are_broadcast_to_every_stream(serve):
    async def scenario(site):
        readers = [asyncio.ensure_future(site.events(3)) for _ in range(2)]
        await until(lambda: site.host.feed.connections == 2)
        task, rpc_id = await asked(site)
        await answer(site, rpc_id)
        await task
        for reader in readers:
            done, requested, resolved = await reader
            assert done["type"] == "replay/done"
            assert requested["type"] == "question/requested" and requested["rpc_id"] == rpc_id
            assert resolved["outcome"] == "answered"

    serve(scenario)


def test_messages_reach_on_message_in_chat_mode_only(serve):
    async def chat(site):
        reply = await site.post("/api/message", {"content": "hello there"})
        assert reply.status == 202
        assert site.messages == ["hello there"]
        assert (await site.post("/api/message", {"content": "  "})).status == 400
        page = (await site.request("GET", "/")).body.decode()
        assert '<meta name="dsh-mode" content="chat">' in page

    async def questions(site):
        reply = await site.post("/api/message", {"content": "hello"})
        assert reply.status == 400 and reply.json()["code"] == "BAD_FRAME"
        assert site.messages == []

    serve(chat, chat=True)
    serve(questions)


def test_closing_the_host_aborts_a_pending_ask_and_ends_streams():
    async def main():
        ui = UserInteraction(session_id="s1")
        host = WebHost(ui, stderr=io.StringIO())
        await host.start()
        ui.register_provider(host.provider)
        task = asyncio.ensure_future(ui.ask(request()))
        await until(lambda: len(ui.pending) == 1)
        await host.close()
        with pytest.raises(UserInteractionError) as caught:
            await task
        assert caught.value.code == "ASK_ABORTED"

    asyncio.run(main())


def test_a_closing_host_ends_every_stream_with_host_closed(serve):
    async def scenario(site):
        reader = asyncio.ensure_future(site.events(2))
        await until(lambda: site.host.feed.connections == 1)
        site.host.feed.close()
        assert await reader == [{"type": "replay/done", "pending": []}, {"type": "host/closed"}]
        # a page that connects after the close is told at once too
        assert await site.events(2) == [{"type": "replay/done", "pending": []},
                                        {"type": "host/closed"}]

    serve(scenario)


def test_discuss_is_ask_discuss_in_a_chat_and_a_bad_frame_on_a_questions_page(serve):
    def discuss(rpc_id, session_id="s1"):
        return {"type": "question/discuss", "rpc_id": rpc_id, "session_id": session_id}

    async def chat(site):
        task, rpc_id = await asked(site)
        other = await site.post("/api/respond", discuss(rpc_id, "s2"))
        assert other.json()["reason"] == "wrong-session" and not task.done()
        reply = await site.post("/api/respond", discuss(rpc_id))
        assert reply.json()["accepted"] is True
        with pytest.raises(UserInteractionError) as caught:
            await task
        assert caught.value.code == "ASK_DISCUSS"
        again = await site.post("/api/respond", discuss(rpc_id))
        assert again.json()["reason"] == "not-pending"

    async def form(site):
        batch = {"questions": [{"id": "env", "question": "Which environment?"}],
                 "source": {"name": "deploy"}}
        task, rpc_id = await asked(site, batch)
        reply = await site.post("/api/respond", discuss(rpc_id))
        assert reply.json()["reason"] == "bad-response" and not task.done()
        await site.post("/api/respond", {"type": "question/cancel", "rpc_id": rpc_id,
                                         "session_id": "s1"})
        with pytest.raises(UserInteractionError):
            await task

    async def questions(site):
        task, rpc_id = await asked(site)
        reply = await site.post("/api/respond", discuss(rpc_id))
        assert reply.status == 400 and reply.json()["code"] == "BAD_FRAME"
        assert not task.done()
        await site.post("/api/respond", {"type": "question/cancel", "rpc_id": rpc_id,
                                         "session_id": "s1"})
        with pytest.raises(UserInteractionError):
            await task

    serve(chat, chat=True)
    serve(form, chat=True)
    serve(questions)
