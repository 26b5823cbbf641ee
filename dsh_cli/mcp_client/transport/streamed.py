"""A long line from a stdio server parsed as a stream into a bounded message (``spec/mcp.md`` 4).

The SDK builds every value of a message it parses, as pydantic models of about 1 KB each,
before dsh sees any of it. A line over ``PARSED_WHOLE_BYTES`` is parsed here instead, from
``ijson``'s events, and only a bounded message is built:

- a result's ``content`` keeps its first ``RESULT_ITEMS`` items; the rest are counted, not
  built, and the count rides in the result's ``_meta`` as a ``Cut`` (``results.py`` marks it);
- a ``requestedSchema`` stops being built once it passes ``FORM_SCHEMA_BYTES``; a ``Cut`` of
  its bytes so far takes its place (``elicitation.form_fields`` refuses it, as over the cap);
- any other value past ``MESSAGE_VALUES`` raises ``TooManyValues``: the connection ends;
- nesting deeper than the SDK's own parser takes is refused as it refuses it (a
  ``ValueError``), so nothing deeper reaches code that recurses.

A ``Cut`` is an ``int`` subclass no JSON parse makes, so a server cannot forge one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dsh_cli.core.limits import FORM_SCHEMA_BYTES, MESSAGE_VALUES, RESULT_ITEMS

__all__ = ["CUT", "Cut", "NotJSON", "TooManyValues", "bounded_message", "cut_of"]

CUT = "dsh/cut"  # the key a Cut is kept under
NESTING = 201  # open arrays and objects: pydantic-core's JSON parser refuses the 202nd
_STARTS = ("start_map", "start_array")
_ENDS = ("end_map", "end_array")


class Cut(int):
    """How much of a server's value dsh counted and did not build: items, or bytes."""


class TooManyValues(Exception):
    """A message with more than ``cap`` values outside its cut parts; it was not built."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"a message of over {cap} JSON values")
        self.cap = cap


class NotJSON(ValueError):
    """A long line the streaming parser refused."""


def cut_of(value: Any) -> int:
    """What a ``Cut`` in ``value`` (a dict) says was left out; 0 when nothing was."""
    found = value.get(CUT) if isinstance(value, dict) else None
    return int(found) if isinstance(found, Cut) else 0


def bounded_message(line: bytes) -> Any:
    """The JSON value of ``line``, built within the caps above."""
    import io

    import ijson  # type: ignore[import-untyped]

    try:
        return _build(ijson.basic_parse(io.BytesIO(line), use_float=True))
    except ijson.JSONError as error:
        raise NotJSON(str(error)) from error


def _build(events: Iterator[tuple[str, Any]]) -> Any:
    holder: dict[str, Any] = {}
    frames: list[list[Any]] = [[holder, ""]]  # each open container and its pending key
    contents: list[Any] = []  # the result's content, once begun
    values = left_out = skipping = 0
    schema_at = schema_bytes = 0  # len(frames) where a requestedSchema began; its size

    for event, value in events:
        if skipping:  # inside a value counted and not built
            skipping += (event in _STARTS) - (event in _ENDS)
            continue
        if event == "map_key":
            frames[-1][1] = value
            if schema_at:
                schema_bytes += len(value) + 3
            continue
        if event in _ENDS:
            frames.pop()
            if len(frames) == schema_at:
                schema_at = 0
            continue
        container, key = frames[-1]
        if container is contents and len(container) >= RESULT_ITEMS:
            left_out += 1
            skipping = event in _STARTS
            continue
        values += 1
        if values > MESSAGE_VALUES:
            raise TooManyValues(MESSAGE_VALUES)
        if not schema_at and key == "requestedSchema" and type(container) is dict:
            schema_at, schema_bytes = len(frames), 0
        if schema_at:
            schema_bytes += (len(value) + 3 if event == "string"
                             else 2 if event in _STARTS else 4)  # as form_fields counts
            if schema_bytes > FORM_SCHEMA_BYTES:
                skipping = len(frames) - schema_at + (event in _STARTS)
                del frames[schema_at:]
                # still a schema as the SDK's check of the spec wants one
                frames[-1][0]["requestedSchema"] = {"type": "object", "properties": {},
                                                    CUT: Cut(schema_bytes)}
                schema_at = 0
                continue
        if event == "start_map":
            built: Any = {}
        elif event == "start_array":
            built = []
            if len(frames) == 3 and frames[1][1] == "result" and key == "content":
                contents = built
        else:
            built = value
        if type(container) is list:
            container.append(built)
        else:
            container[key] = built
        if event in _STARTS:
            if len(frames) > NESTING:  # the holder's frame and NESTING open already
                raise ValueError(f"JSON nested over {NESTING} deep")
            frames.append([built, None])
        elif len(frames) == schema_at:  # the schema was one scalar
            schema_at = 0

    message: Any = holder.get("")
    if left_out:
        result = message["result"]
        if not isinstance(result.get("_meta"), dict):
            result["_meta"] = {}
        result["_meta"][CUT] = Cut(left_out)
    return message
