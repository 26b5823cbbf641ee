"""One assistant turn rebuilt from streamed chat-completion chunks.

Text and reasoning pass straight through as deltas. Tool calls arrive in pieces: the
first fragment of a call carries its ``index``, ``id`` and name, later fragments carry
only the ``index`` and a slice of the arguments text, and several calls may interleave.
Servers differ at the edges, so: a call without an ``index`` continues the last call
unless it brings a new ``id``; a name sent again whole is not doubled; a call that never
got an ``id`` is given one (its result must be able to name it).

Everything a server sends is hostile text, so it is made safe here, as it is assembled,
and every consumer (the screen, stdout, the store, the next request) gets the same text:
lone surrogates become U+FFFD (``core/text.py``), the API key is masked (``key_scrub``),
and a turn longer than ``MAX_TURN_CHARS`` (text, reasoning and tool-call arguments
together) stops with ``TurnTooLong``, holding what had arrived.

Chunks are the JSON objects of the wire format, as plain dicts: no model classes to
build per chunk, and nothing here depends on the SDK.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from dsh_cli.core.limits import TURN_CHARACTERS as MAX_TURN_CHARS
from dsh_cli.core.text import scrub_surrogates, scrub_surrogates_in
from dsh_cli.models.base import Completion, ModelToolCall, ReasoningDelta, TextDelta, Usage
from dsh_cli.models.key_scrub import KeyFilter, mask_key

__all__ = ["MAX_TURN_CHARS", "TurnAssembler", "TurnTooLong"]



class TurnTooLong(Exception):
    """The turn passed ``MAX_TURN_CHARS``; ``content`` is the text kept from before."""

    def __init__(self, limit: int, content: str) -> None:
        super().__init__(f"the model sent more than {limit:,} characters in one turn")
        self.limit = limit
        self.content = content


class _PartialCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []


class TurnAssembler:
    """Feed it the chunks of one response in order; then ask for the ``completion()``."""

    def __init__(self, *, key: str = "", max_chars: int = MAX_TURN_CHARS) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._last_index: int | None = None
        self._key = key
        self._content_filter = KeyFilter(key)
        self._reasoning_filter = KeyFilter(key)
        self._max_chars = max_chars
        self._size = 0
        self.progress = 0  # content fragments so far: what an idle deadline waits for
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def _count(self, text: str) -> None:
        self.progress += 1
        self._size += len(text)
        if self._size > self._max_chars:
            raise TurnTooLong(self._max_chars, self.content + self._content_filter.flush())

    def feed(self, chunk: dict[str, Any]) -> list[TextDelta | ReasoningDelta]:
        """Take one chunk; returns the text and reasoning deltas it carried, in order."""
        usage = chunk.get("usage")
        if usage:
            self.usage = Usage(
                prompt_tokens=usage.get("prompt_tokens") or 0,
                completion_tokens=usage.get("completion_tokens") or 0,
            )
        choices = chunk.get("choices")
        if not choices:
            return []
        choice = choices[0]
        out: list[TextDelta | ReasoningDelta] = []
        delta = choice.get("delta")
        if delta:
            # DeepSeek says reasoning_content; some other servers say reasoning.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                self._count(reasoning)
                reasoning = self._reasoning_filter.feed(scrub_surrogates(reasoning))
                if reasoning:
                    self._reasoning.append(reasoning)
                    out.append(ReasoningDelta(reasoning))
            content = delta.get("content")
            if content and isinstance(content, str):
                self._count(content)
                content = self._content_filter.feed(scrub_surrogates(content))
                if content:
                    self._content.append(content)
                    out.append(TextDelta(content))
            for fragment in delta.get("tool_calls") or ():
                self._add_fragment(fragment)
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        return out

    def _add_fragment(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError("a tool call index is not an integer")
        call_id = fragment.get("id") or ""
        if not isinstance(call_id, str):
            raise TypeError("a tool call id is not text")
        if index is None:
            last_index = self._last_index
            last = self._calls.get(last_index) if last_index is not None else None
            if last_index is not None and last is not None and (
                    not call_id or call_id == last.id):
                index = last_index
            else:
                index = len(self._calls)
                while index in self._calls:
                    index += 1
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _PartialCall()
        self._last_index = index
        if call_id and not call.id:
            call.id = scrub_surrogates(call_id)
            self.progress += 1
        function = fragment.get("function")
        if not function:
            return
        name = function.get("name")
        if name is not None and not isinstance(name, str):
            raise TypeError("a tool name is not text")
        if name and name != call.name:
            name = scrub_surrogates(name)
            call.name = name if not call.name else call.name + name
            self.progress += 1
        arguments = function.get("arguments")
        if isinstance(arguments, dict | list):  # some servers send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif arguments is not None and not isinstance(arguments, str):
            raise TypeError("tool arguments are not text")
        if arguments:
            self._count(arguments)
            call.arguments.append(scrub_surrogates(arguments))

    def flush(self) -> list[TextDelta | ReasoningDelta]:
        """At the end of the stream: the text held back in case it began the key."""
        out: list[TextDelta | ReasoningDelta] = []
        reasoning = self._reasoning_filter.flush()
        if reasoning:
            self._reasoning.append(reasoning)
            out.append(ReasoningDelta(reasoning))
        content = self._content_filter.flush()
        if content:
            self._content.append(content)
            out.append(TextDelta(content))
        return out

    @property
    def content(self) -> str:
        return "".join(self._content)

    def completion(self) -> Completion:
        """The whole turn: text, tool calls in index order, usage, reasoning."""
        calls = [
            ModelToolCall(
                id=call.id or f"call_{uuid.uuid4().hex[:24]}",
                name=call.name,
                arguments=_without_surrogate_escapes(mask_key("".join(call.arguments), self._key)),
            )
            for _, call in sorted(self._calls.items())
        ]
        return Completion(
            content=self.content,
            tool_calls=calls,
            usage=self.usage,
            reasoning="".join(self._reasoning) or None,
        )


# A JSON escape of a lone surrogate, \ud800-\udfff: an escaped pair is rare enough that
# the slow path below (parse, scrub, re-encode) may take it too.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _without_surrogate_escapes(arguments: str) -> str:
    """Arguments whose JSON would decode to lone surrogates, re-encoded without them.

    Arguments stay exactly as the model wrote them otherwise, and so does text that is
    not JSON (the tool reports it as ``INVALID_ARGS``).
    """
    if _SURROGATE_ESCAPE.search(arguments) is None:
        return arguments
    try:
        return json.dumps(scrub_surrogates_in(json.loads(arguments)), ensure_ascii=False)
    except (ValueError, RecursionError):
        return arguments
