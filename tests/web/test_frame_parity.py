"""The same frames to the relay and to the web host give the same outcome (``web.md``).

Every case is sent to an in-process ``JsonLinesRelay`` through a real pipe and to a live
web host on 127.0.0.1 over HTTP; a few sequences also go to a real ``dsh run --jsonl`` and
``dsh ask --jsonl``. An outcome is the events sent back for the frame (the relay's lines,
the web's reply body) with the minted ids put back as placeholders, and whether the
question is still pending after it. Each case also names the outcome it must have, so
two front doors that were wrong in the same way would still fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import threading
from typing import Any

import pytest
from harness.dsh_under_test import DSH
from harness.web_site import Site, until

from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction
from dsh_cli.providers.relay import JsonLinesRelay

QUESTIONS = [
    {"id": "db", "question": "Which database?",
     "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]},
    {"id": "name", "question": "Project name?"},
]
GOOD = [{"id": "db", "selected": ["SQLite"]}, {"id": "name", "custom": "acme"}]
SESSION = "s1"
WAIT = 15
# what a front door sends back for a frame; question/resolved and the run's own events
# (tool/result, ...) follow a settlement on the event stream, not as the frame's reply
REPLIES = {"response/ack", "error", "question/requested"}

Frame = dict[str, Any] | str | bytes


def answer(answers: Any = GOOD, **fields: Any) -> dict[str, Any]:
    """A ``question/answer`` for the pending question; ``None`` drops a field."""
    frame = {"type": "question/answer", "rpc_id": "{rpc}", "session_id": "{session}",
             "answers": answers, **fields}
    return {key: value for key, value in frame.items() if value is not None}


def refused(reason: str) -> tuple[str, str]:
    return ("response/ack", reason)


ACCEPTED = ("response/ack", "accepted")
BAD_FRAME = ("error", "BAD_FRAME")

# name: (frame, expected (reply type, reason or code), still pending afterwards)
CASES: dict[str, tuple[Frame, tuple[str, str], bool]] = {
    "a valid answer": (answer(), ACCEPTED, False),
    "a valid answer with unknown extra fields": (answer(note={"x": 1}), ACCEPTED, False),
    "a cancel": ({"type": "question/cancel", "rpc_id": "{rpc}", "session_id": "{session}"},
                 ACCEPTED, False),
    # issue 36: a cancel obeys the answer's ownership rule
    "a cancel for another session": ({"type": "question/cancel", "rpc_id": "{rpc}",
                                      "session_id": "s_other"}, refused("wrong-session"), True),
    "a cancel without session_id": ({"type": "question/cancel", "rpc_id": "{rpc}"},
                                    refused("wrong-session"), True),
    "an answer for another session": (answer(session_id="s_other"), refused("wrong-session"),
                                      True),
    "an answer without session_id": (answer(session_id=None), refused("wrong-session"), True),
    "an answer with a null session_id": ('{"type": "question/answer", "rpc_id": "{rpc}", '
                                         '"session_id": null, "answers": []}',
                                         refused("wrong-session"), True),
    "an answer that does not fit": (answer([{"id": "db", "selected": ["MySQL"]}, GOOD[1]]),
                                    refused("bad-response"), True),
    "an answer missing an item": (answer(GOOD[:1]), refused("bad-response"), True),
    "an answer item not an object": (answer([5, GOOD[1]]), refused("bad-response"), True),
    "an answer for no pending question": (answer(rpc_id="q_unknown"), refused("not-pending"),
                                          True),
    "a cancel for no pending question": ({"type": "question/cancel", "rpc_id": "q_unknown"},
                                         refused("not-pending"), True),
    "answers not a list": (answer("SQLite"), BAD_FRAME, True),
    "answers an object": (answer({"db": "SQLite"}), BAD_FRAME, True),
    "answers missing": ({"type": "question/answer", "rpc_id": "{rpc}",
                         "session_id": "{session}"}, BAD_FRAME, True),
    "rpc_id a number": (answer(rpc_id=5), BAD_FRAME, True),
    "session_id a number": (answer(session_id=7), BAD_FRAME, True),
    "a cancel without rpc_id": ({"type": "question/cancel"}, BAD_FRAME, True),
    "an unknown type": ({"type": "question/explode", "rpc_id": "{rpc}"}, BAD_FRAME, True),
    "no type": ({"rpc_id": "{rpc}", "answers": GOOD}, BAD_FRAME, True),
    "type not a string": ({"type": ["question/answer"]}, BAD_FRAME, True),
    "an array": ("[1, 2]", BAD_FRAME, True),
    "a string": ('"question/answer"', BAD_FRAME, True),
    "not JSON": ("this is not json", BAD_FRAME, True),
    "truncated JSON": ('{"type": "question/answer", ', BAD_FRAME, True),
    "invalid UTF-8": (b'{"type": "question/cancel", "rpc_id": "\xff\xfe"}', BAD_FRAME, True),
    "a UTF-8 byte-order mark": (b'\xef\xbb\xbf{"type": "question/cancel", "rpc_id": "{rpc}"}',
                                BAD_FRAME, True),
    "nested deeper than JSON decoding allows": ("[" * 100_000, BAD_FRAME, True),
}
# the frames whose outcome leaves the question pending, in the order a real run gets them
STAYS_PENDING = [name for name, (_, _, pending) in CASES.items() if pending]


def wire(frame: Frame, rpc_id: str, session_id: str | None) -> bytes:
    """The bytes of a frame with the live ids in place of ``{rpc}`` and ``{session}``."""
    raw = frame if isinstance(frame, bytes) else (
        frame if isinstance(frame, str) else json.dumps(frame)).encode()
    raw = raw.replace(b"{rpc}", rpc_id.encode())
    return raw.replace(b'"{session}"', json.dumps(session_id).encode())


def placeholders(events: list[dict[str, Any]], rpc_id: str,
                 session_id: str | None) -> list[dict[str, Any]]:
    """The events with the live ids put back as placeholders, to compare across runs."""
    text = json.dumps(events).replace(rpc_id, "{rpc}")
    if session_id is not None:
        text = text.replace(session_id, "{session}")
    return json.loads(text)


def kind(replies: list[dict[str, Any]]) -> tuple[str, str]:
    (reply,) = replies
    if reply["type"] == "error":
        return ("error", reply["code"])
    return ("response/ack", "accepted" if reply["accepted"] else reply["reason"])


def request() -> AskUserQuestionRequest:
    return AskUserQuestionRequest.model_validate({"questions": QUESTIONS})


Outcome = tuple[list[dict[str, Any]], bool]


# -- the relay in this process -------------------------------------------------------------

class Lines:
    """The relay's stdout: each line one JSON event, awaited one at a time."""

    def __init__(self) -> None:
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def write(self, text: str) -> int:
        self.events.put_nowait(json.loads(text))
        return len(text)

    def flush(self) -> None:
        pass

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.events.get(), WAIT)


async def _relay(frames: list[Frame], *, questions_only: bool, ask: bool,
                 session_id: str | None) -> tuple[list[Outcome], list[str]]:
    read_end, write_end = os.pipe()
    source = os.fdopen(read_end, "rb", buffering=0)
    lines = Lines()
    ui = UserInteraction(session_id=session_id)
    relay = JsonLinesRelay(ui, input=source, output=lines, questions_only=questions_only)
    dispose = ui.register_provider(relay.provider)
    await relay.start()
    task = asyncio.ensure_future(ui.ask(request())) if ask else None
    rpc_id = (await lines.next())["rpc_id"] if ask else "q_none"
    outcomes: list[Outcome] = []
    try:
        for number, frame in enumerate(frames):
            # a cancel for an id nobody uses fences the replies: lines are handled in order
            fence = f"q_fence_{number}"
            os.write(write_end, wire(frame, rpc_id, session_id) + b"\n"
                     + json.dumps({"type": "question/cancel", "rpc_id": fence}).encode() + b"\n")
            replies = []
            while (event := await lines.next()).get("rpc_id") != fence:
                if event["type"] in REPLIES:
                    replies.append(event)
            outcomes.append((placeholders(replies, rpc_id, session_id),
                             ui.pending.get(rpc_id) is not None))
    finally:
        os.close(write_end)
        await asyncio.wait_for(relay.eof.wait(), WAIT)
        messages = []
        while (message := await relay.next_user_message()) is not None:
            messages.append(message)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        dispose()
        await relay.close()
        source.close()
    return outcomes, messages


def through_relay(frames: list[Frame], *, questions_only: bool = False, ask: bool = True,
                  session_id: str | None = SESSION) -> tuple[list[Outcome], list[str]]:
    """Each frame's outcome through an in-process relay, and the user messages it queued."""
    return asyncio.run(_relay(frames, questions_only=questions_only, ask=ask,
                              session_id=session_id))


# -- the web host on 127.0.0.1 --------------------------------------------------------------

STATUS = {"response/ack": 200, "error": 400}


def through_web(serve: Any, frames: list[Frame], *, route: str = "/api/respond",
                chat: bool = False, ask: bool = True,
                session_id: str | None = SESSION) -> tuple[list[Outcome], list[str]]:
    """Each frame's outcome through a live web host, and the messages ``on_message`` got."""
    found: dict[str, Any] = {}

    async def scenario(site: Site) -> None:
        task = asyncio.ensure_future(site.ui.ask(request())) if ask else None
        rpc_id = "q_none"
        if task is not None:
            await until(lambda: len(site.ui.pending) == 1)
            rpc_id = site.ui.pending.replay()[0].rpc_id
        outcomes = []
        for frame in frames:
            reply = await site.post(route, wire(frame, rpc_id, session_id))
            replies = [] if reply.status == 202 else [reply.json()]
            for data in replies:
                # the page's words for a refusal (shown.py) ride along; the frame is the relay's
                assert isinstance(data.pop("shown", {}).get("error", ""), str)
            if replies:
                assert reply.status == STATUS[replies[0]["type"]], (reply.status, replies)
            else:
                assert reply.json() == {"accepted": True}
            outcomes.append((placeholders(replies, rpc_id, session_id),
                             site.ui.pending.get(rpc_id) is not None))
        found["outcomes"], found["messages"] = outcomes, list(site.messages)
        if task is not None:
            if not task.done():
                site.ui.pending.cancel(rpc_id, session_id)
            await asyncio.gather(task, return_exceptions=True)

    serve(scenario, chat=chat, session_id=session_id)
    return found["outcomes"], found["messages"]


# -- a real dsh process -----------------------------------------------------------------------

class Process:
    """A ``dsh --jsonl`` subprocess: frames in, one JSON event per stdout line out."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([DSH, *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def next(self) -> dict[str, Any] | None:
        """The next event; None once dsh has ended its output."""
        line = self._lines.get(timeout=WAIT)
        return None if line is None else json.loads(line)

    def outcomes(self, frames: list[Frame]) -> list[Outcome]:
        """Each frame's replies, then whether a replay still announces the question."""
        while (requested := self.next()) is not None and requested["type"] != "question/requested":
            pass
        assert requested is not None, "dsh ended before asking"
        rpc_id, session_id = requested["rpc_id"], requested["session_id"]
        found = []
        for number, frame in enumerate(frames):
            # fence, replay, fence: the replay between the fences tells what is pending
            self._send(wire(frame, rpc_id, session_id), self._fence(f"q_fence_{number}"),
                       b'{"type": "questions/replay"}', self._fence(f"q_after_{number}"))
            replies = self._until(f"q_fence_{number}")
            replayed = self._until(f"q_after_{number}")
            found.append((placeholders([e for e in replies if e["type"] in REPLIES],
                                       rpc_id, session_id),
                          any(e["type"] == "question/requested" for e in replayed)))
        return found

    @staticmethod
    def _fence(rpc_id: str) -> bytes:
        """A cancel for an id nobody uses: its ack marks the end of what came before."""
        return json.dumps({"type": "question/cancel", "rpc_id": rpc_id}).encode()

    def _send(self, *lines: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(line + b"\n" for line in lines))
        self.process.stdin.flush()

    def _until(self, fence: str) -> list[dict[str, Any]]:
        """The events before ``fence``'s ack (all of them if dsh ends its output first)."""
        events = []
        while (event := self.next()) is not None and event.get("rpc_id") != fence:
            events.append(event)
        return events

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        while self._lines.get(timeout=WAIT) is not None:
            pass
        return self.process.wait(timeout=WAIT)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@pytest.fixture
def dsh():
    started: list[Process] = []

    def start(*args: str) -> Process:
        started.append(Process(*args))
        return started[-1]

    yield start
    for each in started:
        each.kill()


# -- the tests --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_a_frame_has_the_same_outcome_through_the_relay_and_the_web(serve, name):
    frame, expected, stays_pending = CASES[name]
    ((relay_replies, relay_pending),), _ = through_relay([frame])
    ((web_replies, web_pending),), _ = through_web(serve, [frame])
    assert relay_replies == web_replies
    assert kind(relay_replies) == expected
    assert relay_pending == web_pending == stays_pending
    if expected == BAD_FRAME:
        assert set(relay_replies[0]) == {"type", "code", "message"} and relay_replies[0]["message"]


def test_a_real_dsh_run_jsonl_gives_the_same_outcomes_as_the_web(serve, dsh, tmp_path):
    frames = [CASES[name][0] for name in STAYS_PENDING] + [CASES["a valid answer"][0]]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "ask_user_question", "arguments": {"questions": QUESTIONS}}]},
        {"content": "done"},
    ]}), encoding="utf-8")
    run = dsh("run", "--jsonl", "--model", f"script:{script}", "go")
    from_run = run.outcomes(frames)
    assert run.close() == 0
    from_web, _ = through_web(serve, frames)
    assert from_run == from_web
    assert [kind(replies) for replies, _ in from_run] == [
        *(CASES[name][1] for name in STAYS_PENDING), ACCEPTED]
    assert [pending for _, pending in from_run] == [True] * len(STAYS_PENDING) + [False]


def test_a_real_dsh_ask_jsonl_and_a_web_ask_without_a_session_agree(serve, dsh, tmp_path):
    frames: list[Frame] = [
        answer(session_id=None, answers="SQLite"),
        {"type": "user/message", "content": "only a run takes this"},
        answer(session_id=None, answers=GOOD[:1]),
        {"type": "question/answer", "rpc_id": "{rpc}", "session_id": "s_any", "answers": GOOD},
    ]
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"questions": QUESTIONS}), encoding="utf-8")
    ask = dsh("ask", "--jsonl", str(path))
    from_ask = ask.outcomes(frames)
    ask.kill()
    from_relay, _ = through_relay(frames, questions_only=True, session_id=None)
    # the web's /api/respond takes no user/message, so the message goes to /api/message
    from_web, _ = through_web(serve, frames[:1], session_id=None)
    from_web += through_web(serve, frames[1:2], route="/api/message", session_id=None)[0]
    from_web += through_web(serve, frames[2:3], session_id=None)[0]
    assert from_ask == from_relay
    assert from_ask[:3] == from_web
    assert [kind(replies) for replies, _ in from_ask] == [
        BAD_FRAME, BAD_FRAME, refused("bad-response"), refused("wrong-session")]
    # issue 16: a frame naming another session than the question's (null included) is
    # wrong-session, so an answer meant for a run cannot settle a dsh ask
    assert [pending for _, pending in from_ask] == [True, True, True, True]


MESSAGES: dict[str, tuple[dict[str, Any], tuple[str, str] | None]] = {
    "a message": ({"type": "user/message", "content": "hello"}, None),
    "a message with extra fields": ({"type": "user/message", "content": "hi", "n": 1}, None),
    "blank content": ({"type": "user/message", "content": "  \n"}, BAD_FRAME),
    "empty content": ({"type": "user/message", "content": ""}, BAD_FRAME),
    "content not a string": ({"type": "user/message", "content": ["hi"]}, BAD_FRAME),
    "no content": ({"type": "user/message"}, BAD_FRAME),
}


@pytest.mark.parametrize("name", MESSAGES)
def test_a_user_message_has_the_same_outcome_through_the_relay_and_the_web(serve, name):
    frame, expected = MESSAGES[name]
    ((relay_replies, _),), relay_messages = through_relay([frame], ask=False)
    ((web_replies, _),), web_messages = through_web(serve, [frame], route="/api/message",
                                                    chat=True, ask=False)
    assert relay_replies == web_replies
    assert relay_messages == web_messages
    if expected is None:
        assert relay_replies == [] and relay_messages == [frame["content"]]
    else:
        assert kind(relay_replies) == expected and relay_messages == []


def test_a_message_body_may_leave_out_its_type_on_the_web_only(serve):
    body = {"content": "hello"}
    ((web_replies, _),), web_messages = through_web(serve, [body], route="/api/message",
                                                    chat=True, ask=False)
    assert web_replies == [] and web_messages == ["hello"]  # web.md: the body is {content}
    ((relay_replies, _),), relay_messages = through_relay([body], ask=False)
    assert kind(relay_replies) == BAD_FRAME and relay_messages == []  # a line names its type


def test_without_a_chat_a_user_message_is_refused_alike(serve):
    frame = {"type": "user/message", "content": "hello"}
    ((relay_replies, _),), relay_messages = through_relay([frame], questions_only=True)
    ((web_replies, _),), web_messages = through_web(serve, [frame], route="/api/message")
    assert relay_replies == web_replies
    assert kind(relay_replies) == BAD_FRAME and "dsh run" in relay_replies[0]["message"]
    assert relay_messages == web_messages == []
