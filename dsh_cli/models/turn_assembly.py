"""One assistant turn rebuilt from streamed chat-completion chunks.

Text and reasoning pass straight through as deltas. Tool calls arrive in pieces: the
first fragment of a call carries its ``index``, ``id`` and name, later fragments carry
only the ``index`` and a slice of the arguments text, and several calls may interleave.
Servers differ at the edges, so: a call without an ``index`` continues the last call
unless it brings a new ``id``; a name sent again whole is not doubled; a call that never
got an ``id`` is given one (its result must be able to name it).
"""

from __future__ import annotations

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
    """Feed it chunks (SDK objects or anything with the same attributes); ask for the turn."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._last_index: int | None = None
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def feed(self, chunk: Any) -> list[TextDelta | ReasoningDelta]:
        """Take one chunk; returns the text and reasoning deltas it carried, in order."""
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = Usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            )
        choices = getattr(chunk, "choices", None)
        if not choices:
            return []
        choice = choices[0]
        out: list[TextDelta | ReasoningDelta] = []
        delta = getattr(choice, "delta", None)
        if delta is not None:
            # DeepSeek says reasoning_content; some other servers say reasoning.
            reasoning = getattr(delta, "reasoning_content", None) or getattr(
                delta, "reasoning", None)
            if reasoning and isinstance(reasoning, str):
                self._reasoning.append(reasoning)
                out.append(ReasoningDelta(reasoning))
            content = getattr(delta, "content", None)
            if content:
                self._content.append(content)
                out.append(TextDelta(content))
            for fragment in getattr(delta, "tool_calls", None) or ():
                self._add_fragment(fragment)
        if getattr(choice, "finish_reason", None):
            self.finish_reason = choice.finish_reason
        return out

    def _add_fragment(self, fragment: Any) -> None:
        index = getattr(fragment, "index", None)
        call_id = getattr(fragment, "id", None) or ""
        if index is None:
            last = self._calls.get(self._last_index) if self._last_index is not None else None
            if last is not None and (not call_id or call_id == last.id):
                index = self._last_index
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
        function = getattr(fragment, "function", None)
        if function is None:
            return
        name = getattr(function, "name", None)
        if name and name != call.name:
            call.name = name if not call.name else call.name + name
        arguments = getattr(function, "arguments", None)
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
