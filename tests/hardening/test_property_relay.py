"""Property: any byte line sent to the JSON-lines relay gets an ack or an ``error`` event,
never a crash, and a question is settled at most once whatever arrives."""

from __future__ import annotations

import asyncio
import json
import os

from harness.hardening_strategies import ANY_JSON, NASTY_TEXT, answers_for, rarely
from hypothesis import event, given
from hypothesis import strategies as st

from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction, UserInteractionError
from dsh_cli.providers.relay import JsonLinesRelay

SESSION = "s_hardening"
RPC_ID = "q_hardening"
SENTINEL = "q_sentinel"
REQUEST_JSON = {"questions": [
    {"id": "db", "question": "Which database?",
     "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]},
    {"id": "features", "question": "Which features?", "multi_select": True,
     "options": [{"label": "Auth"}, {"label": "Billing"}]},
    {"id": "name", "question": "Project name?"},
]}
TEMPLATE = AskUserQuestionRequest.model_validate(REQUEST_JSON)


def _mostly(usual: list, one_in: int = 6) -> st.SearchStrategy:
    """One of ``usual`` (earlier entries repeated to weigh them); any JSON once in a while."""
    return st.one_of(rarely(one_in)).flatmap(
        lambda odd: ANY_JSON if odd else st.sampled_from(usual))


RPC_IDS = _mostly([RPC_ID, RPC_ID, RPC_ID, "q_other", ""])
SESSIONS = _mostly([SESSION, SESSION, SESSION, "s_other", None])


def _answers(batch):
    return batch["answers"] if isinstance(batch, dict) and "answers" in batch else batch


@st.composite
def frames(draw):
    """A frame object: mostly well-typed, with right or wrong ids, answers and fields."""
    kind = draw(st.sampled_from(["answer", "answer", "answer", "cancel", "replay", "message",
                                 "unknown", "junk"]))
    if kind == "answer":
        frame = {"type": "question/answer", "rpc_id": draw(RPC_IDS),
                 "session_id": draw(SESSIONS),
                 "answers": _answers(draw(answers_for(TEMPLATE)))}
    elif kind == "cancel":
        frame = {"type": "question/cancel", "rpc_id": draw(RPC_IDS), "session_id": draw(SESSIONS)}
    elif kind == "replay":
        frame = {"type": "questions/replay"}
    elif kind == "message":
        frame = {"type": "user/message", "content": draw(st.one_of(NASTY_TEXT, ANY_JSON))}
    elif kind == "unknown":
        frame = {"type": draw(st.one_of(NASTY_TEXT, ANY_JSON))}
    else:
        return draw(ANY_JSON)
    for _ in range(draw(st.integers(0, 1))):  # a dropped field or an unknown one
        if draw(st.booleans()) and len(frame) > 1:
            frame.pop(draw(st.sampled_from(sorted(frame))))
        else:
            frame[draw(NASTY_TEXT)] = draw(ANY_JSON)
    return frame


@st.composite
def lines(draw):
    """One input line as bytes (no newline): a frame, damaged or not, or raw bytes."""
    if draw(rarely(6)):
        return draw(st.binary(max_size=60)).replace(b"\n", b" ")
    raw = json.dumps(draw(frames()), ensure_ascii=draw(st.booleans())).encode()
    damage = draw(st.sampled_from(["none"] * 6 + ["cut", "byte", "bom", "cr"]))
    if damage == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif damage == "byte":
        at = draw(st.integers(0, len(raw)))
        bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\x00", b"\x1b", b"\r"]))
        raw = raw[:at] + bad + raw[at:]
    elif damage == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif damage == "cr":
        raw += b"\r"
    return raw


class Output:
    """The relay's stdout: every write must be exactly one JSON object line."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def write(self, text: str) -> int:
        assert text.endswith("\n") and text.count("\n") == 1
        text.encode("ascii")  # ASCII-escaped, so no byte can split a line
        parsed = json.loads(text)
        assert isinstance(parsed, dict) and isinstance(parsed.get("type"), str)
        self.events.append(parsed)
        return len(text)

    def flush(self) -> None:
        pass

    def of(self, kind: str, rpc_id: str | None = None) -> list[dict]:
        return [e for e in self.events
                if e["type"] == kind and (rpc_id is None or e.get("rpc_id") == rpc_id)]


def _kind(raw: bytes) -> str:
    """What the relay must answer a line with: nothing (blank), requested (replay), one event."""
    text = raw.decode("utf-8", "surrogateescape").rstrip("\r\n")
    if not text.strip():
        return "blank"
    try:
        data = json.loads(raw.decode("utf-8").rstrip("\r\n"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "one"
    if isinstance(data, dict) and data.get("type") == "questions/replay":
        return "replay"
    return "one"


async def _feed(sent: list[bytes], output: Output):
    read_end, write_end = os.pipe()
    source = os.fdopen(read_end, "rb", buffering=0)
    ui = UserInteraction(session_id=SESSION)
    relay = JsonLinesRelay(ui, input=source, output=output, questions_only=True)
    ui.register_provider(relay.provider)
    await relay.start()
    try:
        request = AskUserQuestionRequest.model_validate(REQUEST_JSON)
        task = asyncio.create_task(ui.ask(request, rpc_id=RPC_ID))
        while not output.of("question/requested"):
            await asyncio.sleep(0)
        before = len(output.events)
        for raw in sent:
            os.write(write_end, raw + b"\n")
        # a last frame whose ack proves every line before it was handled (lines are FIFO)
        os.write(write_end, json.dumps({"type": "question/cancel", "rpc_id": SENTINEL})
                 .encode() + b"\n")
        for _ in range(2000):
            if output.of("response/ack", SENTINEL):
                break
            await asyncio.sleep(0.002)
        responses = output.events[before:]
        os.close(write_end)
        write_end = None
        try:
            result = ("answered", (await asyncio.wait_for(task, 5)).to_json())
        except UserInteractionError as error:
            result = (error.code, None)
        await asyncio.wait_for(relay.eof.wait(), 5)
        return responses, result
    finally:
        if write_end is not None:
            os.close(write_end)
        await relay.close()
        source.close()


@given(st.lists(lines(), max_size=8))
def test_every_line_gets_an_answer_and_a_question_settles_once(sent):
    output = Output()
    responses, (outcome, answer) = asyncio.run(_feed(sent, output))
    event(outcome)
    sentinel = output.of("response/ack", SENTINEL)
    assert len(sentinel) == 1 and sentinel[0]["reason"] == "not-pending"
    responses = [e for e in responses if e.get("rpc_id") != SENTINEL]

    # one ack or error per non-blank line; a replay re-sends the question (or nothing)
    kinds = [_kind(raw) for raw in sent]
    replies = [e for e in responses if e["type"] in ("response/ack", "error")]
    assert len(replies) == kinds.count("one")
    assert all(e["code"] == "BAD_FRAME" for e in replies if e["type"] == "error")
    assert len([e for e in responses if e["type"] == "question/requested"]) \
        <= kinds.count("replay")
    refused = [e for e in replies if e["type"] == "response/ack" and not e["accepted"]]
    assert {e["reason"] for e in refused} <= {"not-pending", "bad-response", "wrong-session"}

    # first valid response wins: at most one accepted, and exactly one resolution
    accepted = [e for e in replies if e["type"] == "response/ack" and e["accepted"]]
    assert len(accepted) <= 1
    if accepted:
        assert accepted[0]["rpc_id"] == RPC_ID
    (resolved,) = output.of("question/resolved", RPC_ID)
    expected = {"answered": "answered", "ASK_CANCELLED": "cancelled", "ASK_ABORTED": "aborted"}
    assert resolved["outcome"] == expected[outcome]
    if outcome == "answered":
        assert resolved["answer"] == answer
    assert bool(accepted) == (outcome != "ASK_ABORTED")  # no accept: aborted at end of input
    if accepted:
        index = output.events.index
        assert index(accepted[0]) < index(resolved)
