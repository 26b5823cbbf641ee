"""The frames a controller sends, parsed and dispatched by one set of rules.

The JSON-lines relay (one stdin line) and the web host (one POST body) both hand what
they received to ``FrameDispatcher.dispatch`` (``spec/relay.md``, ``spec/web.md``), so the
same bytes give the same typed frame, the same ``BadFrame`` or the same events on either
front door. The rules, in the order they are checked:

1. the bytes are UTF-8 (no BOM) and hold one JSON value, and that value is an object;
2. its ``type`` is a string naming a row of ``FRAME_TYPES``;
3. that row's fields are present and typed: ``rpc_id`` a string, ``answers`` a list,
   ``content`` text that is not blank; ``session_id`` is a string or null and absent means
   null, so any frame that settles something (answer, cancel, decline, discuss, decision)
   without it is ``wrong-session`` for a batch or request asked in a session
   (``core/ownership.py``). Unknown extra fields are ignored, so controllers can send
   newer frames to older dsh;
4. the front door takes that kind (``accept``; ``user/message`` needs a message hook).

Each failure is ``BadFrame`` (code ``BAD_FRAME``) and changes nothing. Whether an answer
fits its question is not a frame problem: the pending table refuses it as
``bad-response`` and the question stays pending. Permission requests have their own table
(``RemotePermissions``): ``permission/decision`` settles one, an unknown ``decision`` is
``bad-response``; ``question/cancel`` dismisses whichever kind its ``rpc_id`` names, and
``questions/replay`` re-sends both kinds. A new frame kind is one model below with
an ``apply`` method plus one row in ``FRAME_TYPES``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Strict,
    StrictStr,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from dsh_cli.core.errors import BAD_FRAME, HarnessError
from dsh_cli.core.events import ErrorEvent
from dsh_cli.core.limits import FRAME_BYTES as MAX_FRAME_BYTES
from dsh_cli.core.shapes import format_validation_error
from dsh_cli.core.text import scrub_surrogates_in

if TYPE_CHECKING:
    from dsh_cli.core.events import Event
    from dsh_cli.interaction.pending import PendingQuestions
    from dsh_cli.permissions.pending import RemotePermissions

__all__ = [
    "BAD_FRAME",
    "FRAME_TYPES",
    "MAX_FRAME_BYTES",
    "BadFrame",
    "Frame",
    "FrameDispatcher",
    "PermissionDecisionFrame",
    "QuestionAnswerFrame",
    "QuestionCancelFrame",
    "QuestionDeclineFrame",
    "QuestionsReplayFrame",
    "UserMessageFrame",
    "decode_frame",
    "frame_from_json",
    "parse_frame",
    "pending_announcements",
]


class BadFrame(HarnessError):
    """What a controller sent is not a frame this front door takes; ``frame_type`` if known."""

    def __init__(self, message: str, frame_type: str | None = None) -> None:
        super().__init__(message, BAD_FRAME)
        self.frame_type = frame_type

    def event(self) -> ErrorEvent:
        """The ``error`` event a controller is sent for it."""
        return ErrorEvent(self.code, self.message)


def _not_blank(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("blank", "must not be blank")
    return text


class Frame(BaseModel):
    """Base of every frame: immutable, extra fields ignored; ``apply`` is what it does."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    type: str

    def apply(self, to: FrameDispatcher) -> list[Event]:
        """Act on the frame; the events to send back to the controller."""
        raise NotImplementedError


class QuestionAnswerFrame(Frame):
    """``question/answer``: whether ``answers`` fits the question is the table's call."""

    type: Literal["question/answer"]
    rpc_id: StrictStr
    session_id: StrictStr | None = None
    answers: Annotated[list[Any], Strict()]

    def apply(self, to: FrameDispatcher) -> list[Event]:
        return [to.pending.respond(self.rpc_id, self.answers, self.session_id)]


class QuestionCancelFrame(Frame):
    """``question/cancel``: the human dismissed the batch, or the permission request."""

    type: Literal["question/cancel"]
    rpc_id: StrictStr
    session_id: StrictStr | None = None

    def apply(self, to: FrameDispatcher) -> list[Event]:
        if to.permissions is not None and self.rpc_id in to.permissions:
            return [to.permissions.cancel(self.rpc_id, self.session_id)]
        return [to.pending.cancel(self.rpc_id, self.session_id)]


class QuestionDeclineFrame(Frame):
    """``question/decline``: the human declined a batch that offers it (elicitation)."""

    type: Literal["question/decline"]
    rpc_id: StrictStr
    session_id: StrictStr | None = None

    def apply(self, to: FrameDispatcher) -> list[Event]:
        return [to.pending.decline(self.rpc_id, self.session_id)]


class QuestionDiscussFrame(Frame):
    """``question/discuss``: the human leaves the batch to talk about it (a chat's web page)."""

    type: Literal["question/discuss"]
    rpc_id: StrictStr
    session_id: StrictStr | None = None

    def apply(self, to: FrameDispatcher) -> list[Event]:
        if not to.discuss:
            raise BadFrame("question/discuss is not accepted here: only the web page of a "
                           "chat offers it", self.type)
        return [to.pending.discuss(self.rpc_id, self.session_id)]


class QuestionsReplayFrame(Frame):
    """``questions/replay``: announce every pending batch and permission request again."""

    type: Literal["questions/replay"]

    def apply(self, to: FrameDispatcher) -> list[Event]:
        return to.replay()


class PermissionDecisionFrame(Frame):
    """``permission/decision``: whether ``decision`` is one of the four is the table's call."""

    type: Literal["permission/decision"]
    rpc_id: StrictStr
    session_id: StrictStr | None = None
    decision: StrictStr
    message: StrictStr | None = None

    def apply(self, to: FrameDispatcher) -> list[Event]:
        if to.permissions is None:
            raise BadFrame("permission/decision is not accepted here: nothing asks "
                           "permission through this front door", self.type)
        return [to.permissions.respond(self.rpc_id, self.decision, self.message,
                                       self.session_id)]


class UserMessageFrame(Frame):
    """``user/message``: the next user message, for a front door with a message hook."""

    type: Literal["user/message"]
    content: Annotated[StrictStr, AfterValidator(_not_blank)]

    def apply(self, to: FrameDispatcher) -> list[Event]:
        if to.on_message is None:
            raise BadFrame("user/message is not accepted here: only dsh run --jsonl and "
                           "dsh web take messages", self.type)
        to.on_message(self.content)
        return []


FRAME_TYPES: dict[str, type[Frame]] = {
    "question/answer": QuestionAnswerFrame,
    "question/cancel": QuestionCancelFrame,
    "question/decline": QuestionDeclineFrame,
    "question/discuss": QuestionDiscussFrame,
    "questions/replay": QuestionsReplayFrame,
    "user/message": UserMessageFrame,
    "permission/decision": PermissionDecisionFrame,
}


def decode_frame(raw: bytes | str) -> Any:
    """The JSON value in one line or body, or ``BadFrame`` (not UTF-8, not JSON).

    Bytes that are not UTF-8 are refused; a lone surrogate spelt as a JSON escape
    (``"\\ud800"``) is valid JSON and becomes U+FFFD here (``core/text.py``).
    """
    if isinstance(raw, str):
        # the relay decodes stdin with surrogateescape: back to the bytes that came in,
        # so the offset reported for a bad byte is the same as for a web body
        try:
            raw = raw.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as error:
            raise BadFrame(f"a frame must be UTF-8 (bad character at offset {error.start})"
                           ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadFrame(f"a frame must be UTF-8 (bad byte at offset {error.start})") from None
    try:
        return scrub_surrogates_in(json.loads(text))
    except (json.JSONDecodeError, RecursionError) as error:
        raise BadFrame(f"not valid JSON: {error}") from None


def frame_from_json(value: Any, default_type: str | None = None) -> Frame:
    """A typed frame from a decoded JSON value, or ``BadFrame`` saying what is wrong.

    ``default_type`` is the kind of an object without ``type`` (the body of
    ``POST /api/message`` is just ``{content}``).
    """
    if not isinstance(value, dict):
        raise BadFrame(f"a frame must be a JSON object, got {_json_kind(value)}")
    kind = value.get("type", default_type)
    if not isinstance(kind, str):
        raise BadFrame('a frame needs a string "type"')
    model = FRAME_TYPES.get(kind)
    if model is None:
        known = ", ".join(FRAME_TYPES)
        raise BadFrame(f"unknown frame type {json.dumps(kind)[:80]} (known: {known})")
    try:
        return model.model_validate(value if "type" in value else {**value, "type": kind})
    except ValidationError as error:
        raise BadFrame(f"{kind}: {format_validation_error(error)}", kind) from None
    except RecursionError:  # pydantic walking a value nested deeper than Python allows
        raise BadFrame(f"{kind}: nested too deeply", kind) from None


def parse_frame(raw: bytes | str, default_type: str | None = None) -> Frame:
    """One frame from one line or body: ``decode_frame`` then ``frame_from_json``."""
    return frame_from_json(decode_frame(raw), default_type)


def _json_kind(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def pending_announcements(pending: PendingQuestions,
                          permissions: RemotePermissions | None = None) -> list[Event]:
    """Every pending batch, then every pending permission request, with their ``rpc_id``s."""
    replay: list[Event] = list(pending.replay())
    if permissions is not None:
        replay.extend(permissions.replay())
    return replay


class FrameDispatcher:
    """Parses what a controller sent and routes it to the question or permission table."""

    def __init__(self, pending: PendingQuestions,
                 on_message: Callable[[str], object] | None = None,
                 permissions: RemotePermissions | None = None, *,
                 discuss: bool = False) -> None:
        self.pending = pending
        self.on_message = on_message
        self.permissions = permissions
        # only where a conversation goes on in this front door (a chat's web page)
        self.discuss = discuss

    def replay(self) -> list[Event]:
        """What ``questions/replay`` re-sends: ``pending_announcements``."""
        return pending_announcements(self.pending, self.permissions)

    def dispatch(self, raw: bytes | str, *, accept: Collection[str] | None = None,
                 default_type: str | None = None) -> list[Event]:
        """The events to send back for one line or body; ``BadFrame`` when it is not a frame.

        ``accept`` narrows the kinds this front door takes (all of ``FRAME_TYPES`` by
        default); a kind outside it is refused as ``BadFrame`` and changes nothing.
        """
        frame = parse_frame(raw, default_type)
        if accept is not None and frame.type not in accept:
            raise BadFrame(f"{frame.type} is not accepted here (accepted: "
                           f"{', '.join(accept)})", frame.type)
        return frame.apply(self)
