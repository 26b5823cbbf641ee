"""The desk protocol (``desk/protocol.py``): every frame both ways, one parser, one encoder.

The end-to-end desk tests (``tests/desk/``, ``tests/mcp_server/test_desk*.py``) pin what
the frames do; these pin their shapes, the parser's rules and its bound.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from dsh_cli.core.events import (
    ErrorEvent,
    PermissionResolved,
    QuestionResolved,
    ResponseAck,
)
from dsh_cli.core.limits import DESK_LINE_BYTES, FRAME_BYTES
from dsh_cli.core.outcomes import Outcome
from dsh_cli.desk import protocol
from dsh_cli.desk.protocol import (
    FROM_PAGE,
    FROM_PROGRAM,
    TO_DESK,
    TO_SERVER,
    BadFrame,
    DeskAck,
    DeskAnswer,
    DeskCancel,
    DeskDecision,
    DeskDecline,
    DeskError,
    DeskFull,
    DeskHello,
    DeskOpened,
    DeskPermissionRequested,
    DeskPermissionResolved,
    DeskQuestionRequested,
    DeskQuestionResolved,
    DeskReleased,
    DeskReplay,
    DeskTaken,
    InboxChanged,
    InboxList,
    encode,
    kind,
    read,
    read_event,
    read_frame,
)

QUESTIONS = [{"id": "db", "question": "Which database?", "header": "DB",
              "options": [{"label": "SQLite"}, {"label": "Postgres"}]}]

TO_DESK_SAMPLES = [
    DeskHello(pid=41, cwd="/work", web_url=None, hold_seconds=30.0),
    DeskQuestionRequested(rpc_id="q1", session_id="s", call_id=None, questions=QUESTIONS,
                          source={"client": "Codex", "cwd": "/w", "pid": 41}, age=1.5,
                          number=7, delivery="async", last_answers={"db": ["SQLite"]}),
    DeskPermissionRequested(rpc_id="p1", session_id=None, call_id="c", tool="Bash",
                            server=None, arguments={"command": "ls"}, hints={},
                            source={"client": None, "cwd": "/w", "pid": 41}, age=None,
                            number=None),
    DeskQuestionResolved(rpc_id="q1", outcome="answered", answer={"answers": []}),
    DeskPermissionResolved(rpc_id="p1", outcome="decided", decision="allow_once"),
    DeskOpened(rpc_id="q1"),
    DeskReleased(rpc_id="q1"),
    DeskAck(rpc_id="q1", accepted=True),
    DeskError(code="BAD_FRAME", message="not valid JSON"),
]
TO_SERVER_SAMPLES = [
    DeskReplay(),
    DeskTaken(rpc_id="q1"),
    DeskFull(rpc_id="q1", message="the dsh desk holds 64 MiB"),
    DeskOpened(rpc_id="q1"),
    DeskReleased(rpc_id="q1"),
    DeskAnswer(rpc_id="q1", session_id="s", answers=[{"id": "db", "selected": ["SQLite"]}]),
    DeskCancel(rpc_id="q1", session_id=None),
    DeskDecline(rpc_id="q1", session_id="s"),
    DeskDecision(rpc_id="p1", session_id="s", decision="deny", message="no"),
]


def test_the_tables_name_every_frame_of_each_direction():
    assert sorted(TO_DESK) == sorted(frame.type for frame in TO_DESK_SAMPLES)
    assert sorted(TO_SERVER) == sorted(frame.type for frame in TO_SERVER_SAMPLES)
    # a program and the page send a subset of what a desk sends, plus inbox/list
    assert set(FROM_PROGRAM) - set(TO_SERVER) == {"inbox/list"}
    assert set(FROM_PAGE) < set(TO_SERVER)


@pytest.mark.parametrize("frame", TO_DESK_SAMPLES, ids=lambda frame: frame.type)
def test_what_a_server_sends_a_desk_reads_back_as_the_same_frame(frame):
    line = encode(frame)
    again = read_event(line)
    assert type(again) is type(frame)
    assert again.model_dump() == frame.model_dump()
    assert again.to_json() == json.loads(line) == frame.to_json()


@pytest.mark.parametrize("frame", TO_SERVER_SAMPLES, ids=lambda frame: frame.type)
def test_what_a_desk_sends_a_server_reads_back_as_the_same_frame(frame):
    again = read_frame(encode(frame))
    assert type(again) is type(frame)
    assert again.model_dump() == frame.model_dump()


@pytest.mark.parametrize("event", [
    QuestionResolved("q1", Outcome.ANSWERED, {"answers": []}, answered_by="desk"),
    QuestionResolved("q1", Outcome.CANCELLED, code="ASK_CANCELLED"),
    PermissionResolved("p1", "decided", "allow_once", "saved"),
    PermissionResolved("p1", "aborted"),
    ResponseAck("q1", True),
    ResponseAck("q1", False, "not-pending", "no pending question q1"),
    ErrorEvent("BAD_FRAME", "not valid JSON"),
], ids=repr)
def test_the_seams_events_a_server_relays_are_frames_of_the_protocol(event):
    """The hub writes the seam's own events (``core/events.py``) as they are: the protocol
    reads each as its frame, field for field."""
    read_back = read_event(json.dumps(event.to_json()).encode())
    assert read_back.type == event.type
    assert read_back.model_dump(exclude_unset=True) == event.to_json()


def test_a_line_past_its_bound_is_refused_before_it_is_decoded(monkeypatch):
    decoded = []
    monkeypatch.setattr(protocol, "decode_frame", lambda raw: decoded.append(raw))
    for reader, limit in ((read_frame, FRAME_BYTES), (read_event, DESK_LINE_BYTES)):
        line = b'{"type":"desk/taken","rpc_id":"' + b"x" * limit + b'"}'
        with pytest.raises(BadFrame, match=f"at most {limit} bytes"):
            reader(line)
    # a str is bounded by its bytes too: 600,000 two-byte characters are 1.2 MB
    with pytest.raises(BadFrame, match="at most"):
        read_frame('{"type":"desk/taken","rpc_id":"' + "é" * (FRAME_BYTES * 6 // 10) + '"}')
    assert decoded == []


@pytest.mark.parametrize(("line", "said"), [
    (b"\x00\xffgarbage{{", "UTF-8"),
    (b"not json", "not valid JSON"),
    (b"[1,2]", "JSON object"),
    (b'{"rpc_id":"q1"}', 'string "type"'),
    (b'{"type":"nope"}', '"nope" is not a frame taken here'),
    (b'{"type":"question/discuss","rpc_id":"q1"}', "not a frame taken here"),
    (b'{"type":"desk/opened","rpc_id":7}', "desk/opened takes rpc_id (a string)"),
    (b'{"type":"desk/taken"}', "desk/taken takes rpc_id (a string)"),
    (b'{"type":"question/answer","rpc_id":"q1","answers":"SQLite"}',
     "question/answer: answers"),
    (b'{"type":"permission/decision","rpc_id":"p1","decision":["deny"]}',
     "permission/decision: decision"),
], ids=["bytes", "json", "array", "no-type", "unknown", "discuss", "hold-id", "taken-id",
        "answers", "decision"])
def test_a_bad_desk_line_is_one_bad_frame_saying_why(line, said):
    with pytest.raises(BadFrame) as refused:
        read_frame(line)
    assert said in refused.value.message
    assert refused.value.event().to_json()["code"] == "BAD_FRAME"
    assert "\n" not in refused.value.message


def test_a_servers_field_of_the_wrong_type_is_unset_and_the_entry_kept():
    """A desk shows what it can of a server's request: a bad ``number``, ``age`` or
    ``source`` is taken as unset; the line itself is written back whole."""
    raw = {"type": "question/requested", "rpc_id": "q1", "number": "7", "age": True,
           "source": "me", "declinable": "yes", "questions": QUESTIONS, "newer": 1}
    event = read_event(json.dumps(raw))
    assert isinstance(event, DeskQuestionRequested)
    assert (event.number, event.age, event.source, event.declinable) == (None, None, None,
                                                                          False)
    assert event.to_json() == raw  # a --jsonl program sees it as the server sent it
    with pytest.raises(BadFrame):  # what routes it must be right
        read_event(json.dumps({**raw, "rpc_id": 7}))


def test_the_hold_lease_of_a_hello_is_a_positive_number_or_unset():
    for given, seconds in ((30, 30), (0.5, 0.5), (0, None), (-1, None), ("30", None),
                           (True, None)):
        hello = read_event(json.dumps({"type": "desk/hello", "pid": 1, "cwd": "/",
                                       "hold_seconds": given}))
        assert isinstance(hello, DeskHello) and hello.hold_seconds == seconds


def test_the_encoder_writes_utf8_to_a_server_and_ascii_to_a_program():
    answer = DeskAnswer(rpc_id="q1", session_id=None,
                        answers=[{"id": "db", "other": "😀 \ud800"}])
    line = encode(answer)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert "😀 \ufffd".encode() in line  # 4 bytes, not a 12-byte escape; no lone surrogate
    assert read_frame(line).model_dump()["answers"] == [{"id": "db", "other": "😀 \ufffd"}]
    assert encode(answer, ascii=True).isascii()


def test_a_frame_built_here_writes_its_optional_fields_only_when_set():
    assert DeskOpened(rpc_id="q1").to_json() == {"type": "desk/opened", "rpc_id": "q1"}
    assert DeskAck(rpc_id="q1", accepted=True).to_json() == {
        "type": "response/ack", "rpc_id": "q1", "accepted": True}
    asked = DeskQuestionRequested(rpc_id="q1", session_id="s", call_id=None,
                                  questions=QUESTIONS, age=None, number=None).to_json()
    assert asked == {"type": "question/requested", "rpc_id": "q1", "session_id": "s",
                     "call_id": None, "questions": QUESTIONS, "age": None, "number": None}


def test_read_takes_only_the_kinds_of_its_table():
    with pytest.raises(BadFrame, match="not a frame taken here"):
        read(b'{"type":"desk/hello","pid":1}', TO_SERVER, FRAME_BYTES)
    with pytest.raises(BadFrame, match="not a frame taken here"):
        read(b'{"type":"desk/taken","rpc_id":"q1"}', TO_DESK, DESK_LINE_BYTES)


# -- one definition: no frame is spelt outside desk/protocol.py ------------------------------

PACKAGE = Path(__file__).resolve().parents[2] / "dsh_cli"
PROTOCOL = PACKAGE / "desk" / "protocol.py"
# the desks and the hub: they speak the protocol through its types only
DESK_SIDE = sorted([*(PACKAGE / "desk").rglob("*.py"),
                    *(PACKAGE / "mcp_server").glob("desk*.py")])
TYPES = {kind(model) for table in (TO_DESK, TO_SERVER, FROM_PROGRAM, FROM_PAGE)
         for model in table.values()} | {kind(InboxChanged), kind(InboxList)}
# the types only the desk channel has (the others are relay.md's too, spelt in core/events.py
# and providers/frames.py for dsh ask, dsh run and dsh web)
DESK_ONLY = {name for name in TYPES if name.startswith(("desk/", "inbox/"))}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant):
            found.add(id(node.body[0].value))
    return found


def frames_spelt(path: Path, names: set[str]) -> list[str]:
    """Where ``path`` spells a frame type of ``names`` as a string, or builds a frame as a
    dict literal with a ``type``, as ``path:line``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    name = path.relative_to(PACKAGE) if path.is_relative_to(PACKAGE) else path.name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in names \
                and id(node) not in docstrings:
            found.append(f"{name}:{node.lineno} {node.value!r}")
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "type" \
                        and isinstance(value, ast.Constant):
                    found.append(f"{name}:{node.lineno} a dict frame")
    return found


def test_no_desk_frame_type_is_spelt_outside_the_protocol():
    """A new frame is one type in ``desk/protocol.py``: the desks and the hub name frames by
    their classes, and nothing else in the package spells a desk-only type."""
    assert {"desk/hello", "desk/opened", "desk/taken", "inbox/list"} <= DESK_ONLY
    spelt = [where for path in DESK_SIDE if path != PROTOCOL
             for where in frames_spelt(path, TYPES - {"error"})]
    spelt += [where for path in sorted(PACKAGE.rglob("*.py"))
              if path != PROTOCOL and path not in DESK_SIDE
              for where in frames_spelt(path, DESK_ONLY) if "dict frame" not in where]
    assert spelt == []


def test_the_scan_finds_a_frame_spelt_by_hand(tmp_path):
    """The check above can fail: a literal type, or a dict built as a frame, is found; a
    docstring that names a frame is not."""
    sample = tmp_path / "sample.py"
    sample.write_text('"""Says desk/opened in its docstring, which is fine."""\n'
                      'SENT = {"type": "desk/opened", "rpc_id": "q1"}\n'
                      'KIND = "permission/requested"\n'
                      'ERROR = {"type": "error"}\n', encoding="utf-8")
    assert sorted(frames_spelt(sample, TYPES - {"error"})) == [
        "sample.py:2 'desk/opened'", "sample.py:2 a dict frame",
        "sample.py:3 'permission/requested'", "sample.py:4 a dict frame"]
