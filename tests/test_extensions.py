"""The extension points: one module names them, and a live session's tool set grows by name."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

import dsh_cli.extensions as extensions
from dsh_cli.config import load_settings
from dsh_cli.interaction import UserInteractionProvider
from dsh_cli.models.base import Completion, ModelToolCall
from dsh_cli.models.resolve import MODEL_BACKENDS
from dsh_cli.runtime import build_runtime
from dsh_cli.tools import BUILTIN_TOOLS, Tool, ToolContext, ToolRegistry


def test_the_extension_points_are_the_objects_where_they_live():
    assert extensions.BUILTIN_TOOLS is BUILTIN_TOOLS
    assert extensions.MODEL_BACKENDS is MODEL_BACKENDS
    assert extensions.Tool is Tool and extensions.ToolRegistry is ToolRegistry
    assert extensions.UserInteractionProvider is UserInteractionProvider
    assert [name for name in extensions.__all__ if not hasattr(extensions, name)] == []


def test_the_module_names_every_registry_a_newcomer_needs():
    doc = extensions.__doc__ or ""
    for name in ("BUILTIN_TOOLS", "ToolRegistry", "register", "unregister", "Policy",
                 "MODEL_BACKENDS", "ModelBackend", "UserInteractionProvider",
                 "dsh_cli/sources.py", "docs/architecture.md"):
        assert name in doc, name


class ClockArgs(BaseModel):
    zone: str


class Clock(Tool[ClockArgs]):
    name = "mcp__time__now"
    description = "The time in a zone."
    Args = ClockArgs

    async def run(self, args: ClockArgs, ctx: ToolContext) -> str:
        return f"noon in {args.zone}"


class Recording:
    """Calls the late tool once it is offered, then answers with the tool's result."""

    name = "recording"

    def __init__(self) -> None:
        self.offered: list[list[str]] = []

    async def stream(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]):
        names = [spec["function"]["name"] for spec in tools]
        self.offered.append(names)
        if messages[-1]["role"] == "tool":
            yield Completion(messages[-1]["content"])
        elif Clock.name in names:
            yield Completion("", [ModelToolCall("call_1", Clock.name, '{"zone": "UTC"}')])
        else:
            yield Completion("no clock yet")


def test_a_tool_registered_on_a_live_session_is_offered_and_run_from_the_next_call():
    model = Recording()
    runtime = build_runtime(load_settings(model="demo", config={}), persist=False, model=model)
    try:
        assert runtime.tools.names == list(BUILTIN_TOOLS)
        assert asyncio.run(runtime.loop.run_turn("what time is it?")) == "no clock yet"
        runtime.tools.register(Clock())
        assert asyncio.run(runtime.loop.run_turn("and now?")) == "noon in UTC"
        runtime.tools.unregister(Clock.name)
        assert asyncio.run(runtime.loop.run_turn("once more")) == "no clock yet"
    finally:
        runtime.close()
    assert model.offered == [
        ["ask_user_question"],
        ["ask_user_question", Clock.name],
        ["ask_user_question", Clock.name],
        ["ask_user_question"],
    ]


def test_a_session_without_questions_leaves_out_only_ask_user_question():
    runtime = build_runtime(load_settings(model="demo", config={}), persist=False, ask=False)
    try:
        assert runtime.tools.names == [n for n in BUILTIN_TOOLS if n != "ask_user_question"]
    finally:
        runtime.close()
