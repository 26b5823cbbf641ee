"""``ScriptedModel``: replays assistant turns from a script file (``--model script:PATH``).

Turn *n* answers the model call made when the conversation already holds *n* assistant
messages, so the model is stateless and a resumed session carries on where the script
stopped. ``arguments`` may be any JSON value: a string is sent as the raw arguments text
(so a script can send malformed JSON), anything else as its JSON encoding.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from itertools import repeat
from pathlib import Path
from typing import Any

from dsh_cli.core.errors import SCRIPT_ERROR
from dsh_cli.core.text import scrub_surrogates_in
from dsh_cli.models.base import (
    Completion,
    ModelError,
    ModelToolCall,
    RetryHook,
    StreamItem,
    TextDelta,
    ignore_retry,
)

__all__ = ["SCRIPT_ERROR", "ScriptedModel"]

_WORDS = re.compile(r"\S+\s*|\s+")


class ScriptedModel:
    """A deterministic model for tests, scripts and demos."""

    def __init__(self, turns: list[dict[str, Any]], *, name: str = "script",
                 delay: float = 0.0) -> None:
        self.turns = turns
        self.name = name
        self.delay = delay  # seconds between streamed chunks (tests of a slow stream)
        self.on_retry: RetryHook = ignore_retry  # nothing here is ever retried

    @classmethod
    def load(cls, path: str | Path) -> ScriptedModel:
        """Read a script file; a ``ModelError`` naming the file when it is unusable."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as error:
            raise ModelError(f"cannot read script {path}: {error.strerror}", SCRIPT_ERROR) from None
        except json.JSONDecodeError as error:
            raise ModelError(f"script {path}: not valid JSON: {error}", SCRIPT_ERROR) from None
        except RecursionError:
            raise ModelError(f"script {path}: JSON nested too deeply", SCRIPT_ERROR) from None
        try:
            data = scrub_surrogates_in(data)  # the one rule for text entering dsh
        except RecursionError:
            raise ModelError(f"script {path}: JSON nested too deeply", SCRIPT_ERROR) from None
        turns = data.get("turns") if isinstance(data, dict) else None
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise ModelError(f"script {path}: expected {{\"turns\": [{{...}}, ...]}}", SCRIPT_ERROR)
        delay = data.get("delay", 0.0)
        if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
            raise ModelError(f"script {path}: delay must be a number of seconds", SCRIPT_ERROR)
        return cls(turns, name=f"script:{path}", delay=float(delay))

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[StreamItem]:
        # map/count run in C: a 1,000-batch relay run calls this with 3,000+ messages
        index = list(map(dict.get, messages, repeat("role"))).count("assistant")
        if index >= len(self.turns):
            raise ModelError(
                f"the script has no turn {index + 1} (it has {len(self.turns)})", SCRIPT_ERROR
            )
        turn = self.turns[index]
        if "error" in turn:
            raise ModelError(str(turn["error"]), str(turn.get("code", SCRIPT_ERROR)))
        content = str(turn.get("content") or "")
        for chunk in _WORDS.findall(content):
            if self.delay:
                await asyncio.sleep(self.delay)
            yield TextDelta(chunk)
        calls = [_tool_call(call, index, number)
                 for number, call in enumerate(turn.get("tool_calls") or [])]
        yield Completion(content=content, tool_calls=calls)


def _tool_call(call: object, turn: int, number: int) -> ModelToolCall:
    if not isinstance(call, dict) or "name" not in call:
        raise ModelError(f"script turn {turn + 1}: a tool call needs a name", SCRIPT_ERROR)
    arguments = call.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ModelToolCall(id=str(call.get("id") or f"call_{turn + 1}_{number + 1}"),
                         name=str(call["name"]), arguments=arguments)
