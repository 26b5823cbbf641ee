"""Test doubles for the seam: a probing provider."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionRequest

HANG = object()  # a reply that never comes: the provider waits until cancelled


class ProbeProvider:
    """Answers each ask with the next reply (value, exception, future, function) or hangs.

    It records what the seam did to it: the requests shown (and the ``AskContext`` of
    each showing), those cancelled, how many were on screen at once, and the events
    already emitted when it was called. A function reply is called with the context.
    """

    def __init__(self, *replies, events=None):
        self.replies = list(replies)
        self.requests = []
        self.contexts = []
        self.cancelled = []
        self.showing = 0
        self.max_showing = 0
        self.events = events
        self.events_seen_at_call = []
        self.shown = asyncio.Event()

    async def ask(self, context):
        request = context.request
        self.requests.append(request)
        self.contexts.append(context)
        if self.events is not None:
            self.events_seen_at_call.append(list(self.events))
        self.showing += 1
        self.max_showing = max(self.max_showing, self.showing)
        self.shown.set()
        try:
            reply = self.replies.pop(0) if self.replies else HANG
            if reply is HANG:
                await asyncio.get_running_loop().create_future()
            if callable(reply) and not isinstance(reply, BaseException):
                reply = reply(context)
            if inspect.isawaitable(reply):
                reply = await reply
            if isinstance(reply, BaseException):
                raise reply
            return reply
        except asyncio.CancelledError:
            self.cancelled.append(request)
            raise
        finally:
            self.showing -= 1


@pytest.fixture
def probe():
    """``probe(*replies, events=None)`` builds a ``ProbeProvider``."""
    return ProbeProvider




@pytest.fixture
def request_of():
    """``request_of(*questions, **fields)``: a request from question dicts."""

    def build(*questions, **fields):
        items = [AskUserQuestionItem.model_validate(q) for q in questions]
        return AskUserQuestionRequest(questions=items, **fields)

    return build


@pytest.fixture
def recorded():
    """``recorded(ui)``: a list that receives every event ``ui`` emits."""

    def subscribe(ui):
        seen = []
        ui.events.subscribe(seen.append)
        return seen

    return subscribe
