"""One assistant turn rebuilt from streamed chat-completion chunks.

Text and reasoning pass straight through as deltas. Tool calls arrive in pieces: the
first fragment of a call carries its ``index``, ``id`` and name, later fragments carry
only the ``index`` and a slice of the arguments text, and several calls may interleave.
Servers differ at the edges, so: a call without an ``index`` continues the last call
unless it brings a new ``id``; a name sent again whole is not doubled; a call that never
got an ``id`` is given one (its result must be able to name it).

Chunks are the JSON objects of the wire format, as plain dicts: no model classes to
build per chunk, and nothing here depends on the SDK.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from dsh_cli.models.base import Completion, ModelToolCall, ReasoningDelta, TextDelta, Usage

__all__ = ["TurnAssembler"]


class _PartialCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []


class TurnAssembler:
    """Feed it the chunks of one response in order; then ask for the ``completion()``."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._last_index: int | None = None
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

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
                self._reasoning.append(reasoning)
                out.append(ReasoningDelta(reasoning))
            content = delta.get("content")
            if content and isinstance(content, str):
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
            call.id = call_id
        function = fragment.get("function")
        if not function:
            return
        name = function.get("name")
        if name is not None and not isinstance(name, str):
            raise TypeError("a tool name is not text")
        if name and name != call.name:
            call.name = name if not call.name else call.name + name
        arguments = function.get("arguments")
        if isinstance(arguments, dict | list):  # some servers send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif arguments is not None and not isinstance(arguments, str):
            raise TypeError("tool arguments are not text")
        if arguments:
            call.arguments.append(arguments)

    @property
    def content(self) -> str:
        return "".join(self._content)

    def completion(self) -> Completion:
        """The whole turn: text, tool calls in index order, usage, reasoning."""
        calls = [
            ModelToolCall(
                id=call.id or f"call_{uuid.uuid4().hex[:24]}",
                name=call.name,
                arguments="".join(call.arguments),
            )
            for _, call in sorted(self._calls.items())
        ]
        return Completion(
            content=self.content,
            tool_calls=calls,
            usage=self.usage,
            reasoning="".join(self._reasoning) or None,
        )
