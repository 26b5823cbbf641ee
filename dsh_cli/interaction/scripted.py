"""``ScriptedProvider``: a provider whose answers are given up front or computed.

It plugs into the real seam the way httpx's ``MockTransport`` plugs into a real client,
so tests exercise validation, queueing and settlement exactly as a UI would.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from dsh_cli.core.errors import NO_PROVIDER, UserInteractionError
from dsh_cli.interaction.traits import AnsweredBy
from dsh_cli.interaction.vocabulary import AskContext, AskUserQuestionRequest

__all__ = ["ScriptedProvider"]

Reply = Any  # an answer (object or JSON), an exception to raise, or a function of the request


class ScriptedProvider(AnsweredBy):
    """Answers each ask with the next scripted reply; records every request it saw."""

    answered_by = "scripted"  # the provenance the store keeps with each answer

    def __init__(self, replies: Iterable[Reply] | Callable[[AskUserQuestionRequest], Any] = (),
                 *, delay: float = 0.0) -> None:
        self._function = replies if callable(replies) else None
        self._replies: deque[Reply] = deque() if callable(replies) else deque(replies)
        self.delay = delay
        self.requests: list[AskUserQuestionRequest] = []
        self.contexts: list[AskContext] = []  # each showing: its rpc_id, session, deadline
        self.cancelled: list[AskUserQuestionRequest] = []

    def enqueue(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    async def ask(self, context: AskContext) -> Any:
        request = context.request
        self.requests.append(request)
        self.contexts.append(context)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            reply = self._next(request)
            if isinstance(reply, BaseException):
                raise reply
            if asyncio.iscoroutine(reply):
                reply = await reply
            return reply
        except asyncio.CancelledError:
            self.cancelled.append(request)
            raise

    def _next(self, request: AskUserQuestionRequest) -> Reply:
        if self._function is not None:
            return self._function(request)
        if not self._replies:
            raise UserInteractionError("the scripted provider has no reply left", NO_PROVIDER)
        reply = self._replies.popleft()
        return reply(request) if callable(reply) else reply
