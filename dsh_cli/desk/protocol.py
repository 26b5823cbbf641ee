"""The desk protocol: every line between ``dsh mcp`` and a desk, both ways, as a typed value.

A desk connects to each server's socket (``desk/channel.py``); either side writes one JSON
object a line. The tables name every frame a reader takes:

    TO_DESK       dsh mcp -> desk:  desk/hello, question/requested, question/resolved,
                  permission/requested, permission/resolved, desk/opened, desk/released,
                  response/ack, error
    TO_SERVER     desk -> dsh mcp:  questions/replay, desk/taken, desk/full, desk/opened,
                  desk/released, question/answer, question/cancel, question/decline,
                  permission/decision
    FROM_PROGRAM  a program -> ``dsh attach --jsonl``: the answers and holds it forwards,
                  and inbox/list (answered with inbox/list; every change is inbox/changed)
    FROM_PAGE     the web desk's page -> the web desk: answers, decisions, and holds that
                  name the tab's event stream (``connection``)

The frames that settle something are the relay's (``providers/frames.py``), so the server
applies them as ``dsh ask --jsonl`` does. ``read`` is the one parser: the bytes are bounded
before they are decoded, then one JSON object, then the model of its ``type``; anything
else is ``BadFrame``, which a server answers with an ``error`` and a desk skips. ``encode``
is the one encoder. A frame read from the wire writes back as it came (a ``--jsonl``
program sees a server's event whole), one built here writes its fields. What a server
sends a desk is read leniently: a field of the wrong type is taken as unset (the desk shows
the entry with what it has), while ``type`` and ``rpc_id``, which route it, must be right.

A new frame is one class here, one row in its tables, and its screens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Protocol, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticUseDefault

from dsh_cli.core.json_lines import json_line
from dsh_cli.core.limits import DESK_LINE_BYTES, FRAME_BYTES
from dsh_cli.core.shapes import format_validation_error
from dsh_cli.providers.frames import (
    BadFrame,
    PermissionDecisionFrame,
    QuestionAnswerFrame,
    QuestionCancelFrame,
    QuestionDeclineFrame,
    QuestionsReplayFrame,
    decode_frame,
)

__all__ = [
    "FROM_PAGE",
    "FROM_PROGRAM",
    "TO_DESK",
    "TO_SERVER",
    "BadFrame",
    "DeskAck",
    "DeskAnswer",
    "DeskCancel",
    "DeskDecision",
    "DeskDecline",
    "DeskError",
    "DeskFull",
    "DeskHello",
    "DeskOpened",
    "DeskPermissionRequested",
    "DeskPermissionResolved",
    "DeskQuestionRequested",
    "DeskQuestionResolved",
    "DeskReleased",
    "DeskReplay",
    "DeskTaken",
    "InboxChanged",
    "InboxList",
    "InboxListRequest",
    "Readable",
    "Wire",
    "asks_permission",
    "encode",
    "kind",
    "prepare",
    "read",
    "read_event",
    "read_frame",
    "read_page_frame",
    "read_program_frame",
]


def _or_default(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:
        raise PydanticUseDefault() from None


# a field a server may get wrong without the entry being lost: wrong is unset
Lenient = WrapValidator(_or_default)
Seconds = Annotated[StrictInt | StrictFloat, Field(gt=0)]


class Wire(BaseModel):
    """Base of every desk frame: immutable, extra fields kept (and written back)."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    type: str
    # what ``to_json`` leaves out at these values (the fields relay.md makes optional)
    _unset: ClassVar[Mapping[str, Any]] = {}
    # the JSON object this frame was read from, written back as it came
    _wire: dict[str, Any] | None = PrivateAttr(default=None)
    # what a frame of this kind takes, for the one-line error when it does not
    usage: ClassVar[str | None] = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object: as it came when read, else the fields (optional ones when set)."""
        if self._wire is not None:
            return self._wire
        data = self.model_dump(mode="json")
        for name, unset in self._unset.items():
            if name in data and data[name] == unset:
                del data[name]
        return data


class _RpcFrame(Wire):
    usage: ClassVar[str | None] = "rpc_id (a string)"
    rpc_id: StrictStr


# -- dsh mcp -> desk -----------------------------------------------------------------------

class DeskHello(Wire):
    """The first line on every desk connection: which server, its browser URL, the lease."""

    type: Literal["desk/hello"] = "desk/hello"
    pid: Annotated[StrictInt | None, Lenient] = None
    cwd: Annotated[StrictStr | None, Lenient] = None
    web_url: Annotated[StrictStr | None, Lenient] = None
    hold_seconds: Annotated[Seconds | None, Lenient] = None  # a hold lasts this long unrenewed


class DeskOpened(_RpcFrame):
    """A desk opened ``rpc_id`` for answering (to its server, renewing the lease), or another
    desk has it open (from the server); on the page, ``connection`` is the tab's stream."""

    type: Literal["desk/opened"] = "desk/opened"
    connection: Annotated[StrictStr | None, Lenient] = None
    _unset: ClassVar[Mapping[str, Any]] = {"connection": None}


class DeskReleased(_RpcFrame):
    """The desk went back to the list unanswered (to its server); no desk has it open any
    more (from the server)."""

    type: Literal["desk/released"] = "desk/released"
    connection: Annotated[StrictStr | None, Lenient] = None
    _unset: ClassVar[Mapping[str, Any]] = {"connection": None}


class DeskQuestionRequested(Wire):
    """``question/requested`` as a desk sees it: ``source`` is ``{client, cwd, pid}`` (and
    ``server`` for an MCP server's form), ``last_answers`` the labels chosen when the same
    questions were answered before (highlighted, never submitted) and ``last_answered``
    where each came from; ``age`` in seconds and the entry's ``number`` at every desk."""

    type: Literal["question/requested"] = "question/requested"
    rpc_id: StrictStr
    session_id: Annotated[StrictStr | None, Lenient] = None
    call_id: Annotated[StrictStr | None, Lenient] = None
    questions: Any = None  # checked by the question UI that shows them
    source: Annotated[dict[str, Any] | None, Lenient] = None
    declinable: Annotated[StrictBool, Lenient] = False
    review: Annotated[StrictBool, Lenient] = False
    delivery: Annotated[StrictStr, Lenient] = "wait"  # "async": no tool call waits for it
    last_answers: Annotated[dict[str, Any] | None, Lenient] = None
    last_answered: Annotated[dict[str, Any] | None, Lenient] = None
    age: Annotated[StrictInt | StrictFloat | None, Lenient] = None
    number: Annotated[StrictInt | None, Lenient] = None
    _unset: ClassVar[Mapping[str, Any]] = {
        "source": None, "declinable": False, "review": False, "delivery": "wait",
        "last_answers": None, "last_answered": None}


class DeskPermissionRequested(Wire):
    """``permission/requested`` as a desk sees it: with ``source``, ``age`` and ``number``."""

    type: Literal["permission/requested"] = "permission/requested"
    rpc_id: StrictStr
    session_id: Annotated[StrictStr | None, Lenient] = None
    call_id: Annotated[StrictStr | None, Lenient] = None
    tool: Any = None
    server: Annotated[StrictStr | None, Lenient] = None
    arguments: Any = None
    hints: Annotated[dict[str, Any] | None, Lenient] = None
    description: Annotated[StrictStr | None, Lenient] = None  # the tool's own (untrusted)
    source: Annotated[dict[str, Any] | None, Lenient] = None
    age: Annotated[StrictInt | StrictFloat | None, Lenient] = None
    number: Annotated[StrictInt | None, Lenient] = None
    _unset: ClassVar[Mapping[str, Any]] = {"description": None}


class DeskQuestionResolved(Wire):
    """A batch settled at its server (``outcome``), or its server went away (``aborted``)."""

    type: Literal["question/resolved"] = "question/resolved"
    rpc_id: StrictStr
    outcome: Annotated[StrictStr | None, Lenient] = None
    answer: Any = None
    message: Annotated[StrictStr | None, Lenient] = None  # why, when the desk says it
    _unset: ClassVar[Mapping[str, Any]] = {"answer": None, "message": None}


class DeskPermissionResolved(Wire):
    """A permission request settled: its ``decision``, or the ``outcome`` without one."""

    type: Literal["permission/resolved"] = "permission/resolved"
    rpc_id: StrictStr
    outcome: Annotated[StrictStr | None, Lenient] = None
    decision: Annotated[StrictStr | None, Lenient] = None
    message: Annotated[StrictStr | None, Lenient] = None
    _unset: ClassVar[Mapping[str, Any]] = {"decision": None, "message": None}


class DeskAck(Wire):
    """``response/ack``: the server's (or the desk's own ``not-pending``) reply to a frame."""

    type: Literal["response/ack"] = "response/ack"
    rpc_id: Any = None  # echoed as the frame named it, a string or not
    accepted: Annotated[StrictBool, Lenient] = False
    reason: Annotated[StrictStr | None, Lenient] = None
    message: Annotated[StrictStr | None, Lenient] = None
    _unset: ClassVar[Mapping[str, Any]] = {"reason": None, "message": None}


class DeskError(Wire):
    """``error``: a frame that was not one (``BAD_FRAME``); nothing changed."""

    type: Literal["error"] = "error"
    code: Annotated[StrictStr | None, Lenient] = None
    message: Annotated[StrictStr | None, Lenient] = None
    _unset: ClassVar[Mapping[str, Any]] = {"code": None}


# -- desk -> dsh mcp ------------------------------------------------------------------------

class DeskTaken(_RpcFrame):
    """The desk holds the batch or request it was sent: it counts as a desk for it."""

    type: Literal["desk/taken"] = "desk/taken"


class DeskFull(_RpcFrame):
    """Instead of ``desk/taken``: the desk holds too many bytes already; ``message`` why."""

    type: Literal["desk/full"] = "desk/full"
    message: Annotated[StrictStr | None, Lenient] = None


class DeskReplay(QuestionsReplayFrame):
    """``questions/replay``: announce every pending batch and permission request again."""

    type: Literal["questions/replay"] = "questions/replay"

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class DeskAnswer(QuestionAnswerFrame):
    """``question/answer``: the answers to ``rpc_id``, naming its ``session_id``."""

    type: Literal["question/answer"] = "question/answer"

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class DeskCancel(QuestionCancelFrame):
    """``question/cancel``: the human dismissed the batch."""

    type: Literal["question/cancel"] = "question/cancel"

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class DeskDecline(QuestionDeclineFrame):
    """``question/decline``: the human declined a batch that offers it."""

    type: Literal["question/decline"] = "question/decline"

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class DeskDecision(PermissionDecisionFrame):
    """``permission/decision``: allow_once ... deny, with the human's ``message``."""

    type: Literal["permission/decision"] = "permission/decision"

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


# -- a program <-> dsh attach --jsonl ------------------------------------------------------

class InboxListRequest(Wire):
    """``inbox/list`` from a program: answered with the list (``InboxList``)."""

    type: Literal["inbox/list"] = "inbox/list"


class InboxList(Wire):
    """``inbox/list`` to a program (each entry as ``Entry.to_json``) or to the web page."""

    type: Literal["inbox/list"] = "inbox/list"
    entries: list[dict[str, Any]]


class InboxChanged(Wire):
    """``inbox/changed``: one change to the list (``added``, ``removed``, ``taken``,
    ``free``), the entry, why it was removed, and how many are pending after it."""

    type: Literal["inbox/changed"] = "inbox/changed"
    change: str
    entry: dict[str, Any]
    reason: str | None = None
    pending: int
    _unset: ClassVar[Mapping[str, Any]] = {"reason": None}


def kind(model: type[BaseModel]) -> str:
    """The ``type`` a frame class is written with."""
    return str(model.model_fields["type"].default)


Readable = Wire | QuestionsReplayFrame | QuestionAnswerFrame | QuestionCancelFrame | \
    QuestionDeclineFrame | PermissionDecisionFrame
FrameType = TypeVar("FrameType", bound=BaseModel)

TO_DESK: dict[str, type[Wire]] = {kind(model): model for model in (
    DeskHello, DeskQuestionRequested, DeskQuestionResolved, DeskPermissionRequested,
    DeskPermissionResolved, DeskOpened, DeskReleased, DeskAck, DeskError)}
TO_SERVER: dict[str, type[Readable]] = {kind(model): model for model in (
    DeskReplay, DeskTaken, DeskFull, DeskOpened, DeskReleased, DeskAnswer, DeskCancel,
    DeskDecline, DeskDecision)}
FROM_PROGRAM: dict[str, type[Readable]] = {kind(model): model for model in (
    DeskReplay, DeskOpened, DeskReleased, DeskAnswer, DeskCancel, DeskDecision,
    InboxListRequest)}
# a desk has no conversation to discuss a batch in: no question/discuss
FROM_PAGE: dict[str, type[Readable]] = {kind(model): model for model in (
    DeskOpened, DeskReleased, DeskAnswer, DeskCancel, DeskDecline, DeskDecision)}


def prepare() -> None:
    """Build every frame's reader now: pydantic defers it to first use, which would make a
    desk's first batch wait for it (90 ms in a desk process that built none yet)."""
    for model in {*TO_DESK.values(), *TO_SERVER.values(), *FROM_PROGRAM.values(),
                  *FROM_PAGE.values(), InboxChanged, InboxList}:
        if not model.__pydantic_complete__:
            model.model_rebuild(force=True)


def read(raw: bytes | str, kinds: Mapping[str, type[FrameType]], limit: int) -> FrameType:
    """One frame of ``kinds`` from one line, or ``BadFrame`` saying why (and changing nothing).

    The size is checked before anything is decoded; then UTF-8, one JSON object, a known
    ``type``, that type's fields (``providers/frames.py``'s rules).
    """
    if len(raw) > limit:  # a str has no more characters than bytes: cheap, and first
        raise BadFrame(f"a frame is at most {limit} bytes")
    if isinstance(raw, str):
        # what a reader decoded with surrogateescape: back to the bytes that came in
        try:
            raw = raw.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as error:
            raise BadFrame(f"a frame must be UTF-8 (bad character at offset {error.start})"
                           ) from None
        if len(raw) > limit:
            raise BadFrame(f"a frame is at most {limit} bytes")
    value = decode_frame(raw)
    if not isinstance(value, dict):
        raise BadFrame("a frame must be a JSON object")
    kind = value.get("type")
    if not isinstance(kind, str):
        raise BadFrame('a frame needs a string "type"')
    model = kinds.get(kind)
    if model is None:
        raise BadFrame(f"{json.dumps(kind)[:80]} is not a frame taken here (taken: "
                       f"{', '.join(kinds)})")
    try:
        frame = model.model_validate(value)
    except ValidationError as error:
        usage = model.usage if issubclass(model, Wire) else None
        said = f"{kind} takes {usage}" if usage is not None \
            else f"{kind}: {format_validation_error(error)}"
        raise BadFrame(said, kind) from None
    except RecursionError:  # pydantic walking a value nested deeper than Python allows
        raise BadFrame(f"{kind}: nested too deeply", kind) from None
    if isinstance(frame, Wire):
        frame._wire = value
    return frame


def read_frame(raw: bytes | str) -> Readable:
    """What a desk sent its server (``TO_SERVER``), at most ``FRAME_BYTES``."""
    return read(raw, TO_SERVER, FRAME_BYTES)


def read_event(raw: bytes | str) -> Wire:
    """What a server sent a desk (``TO_DESK``), at most ``DESK_LINE_BYTES``."""
    return read(raw, TO_DESK, DESK_LINE_BYTES)


def read_program_frame(raw: bytes | str) -> Readable:
    """What a program sent ``dsh attach --jsonl`` (``FROM_PROGRAM``)."""
    return read(raw, FROM_PROGRAM, FRAME_BYTES)


def read_page_frame(raw: bytes | str) -> Readable:
    """What the web desk's page posted (``FROM_PAGE``)."""
    return read(raw, FROM_PAGE, FRAME_BYTES)


def asks_permission(event: Mapping[str, Any]) -> bool:
    """Whether a request's JSON (an entry's event) asks permission rather than questions."""
    return event.get("type") == kind(DeskPermissionRequested)


class Encodable(Protocol):
    """A frame or an event: anything that is one JSON object."""

    def to_json(self) -> dict[str, Any]: ...


def encode(frame: Encodable, *, ascii: bool = False) -> bytes:
    """One frame as one line. UTF-8 as it is by default (a ``\\ud83d\\ude00`` pair is 12 bytes
    for a 4-byte emoji: an answer within its characters' cap would outgrow ``FRAME_BYTES``),
    a lone surrogate as U+FFFD; ``ascii`` escapes everything else (a program's stdout)."""
    text = json_line(frame.to_json(), ascii_only=ascii)
    return text.encode("ascii" if ascii else "utf-8")
