"""Fixtures for the chat: a runtime on a scripted or demo model, a REPL over pipe input."""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from typing import Any

import pytest

from dsh_cli.chat.prompt import TerminalPrompt
from dsh_cli.chat.repl import ChatRepl
from dsh_cli.config import load_settings
from dsh_cli.interaction import ScriptedProvider
from dsh_cli.models.demo import DemoModel
from dsh_cli.models.scripted import ScriptedModel
from dsh_cli.runtime import build_runtime
from dsh_cli.transcript import TranscriptRenderer


@dataclass
class Chat:
    """A finished chat: exit status, what reached stdout and stderr, and the runtime."""

    status: int
    out: str
    err: str
    runtime: Any
    provider: ScriptedProvider
    events: list[Any] = field(default_factory=list)


def _make_runtime(model: Any = None, *, system: str | None = None, ask: bool = True) -> Any:
    settings = load_settings(model="demo", config={})
    return build_runtime(settings, system=system, ask=ask, persist=False,
                         model=model or DemoModel())


def _drive(keys: str, *, model: Any = None, replies: Any = (), runtime: Any = None,
          during: Any = None, system: str | None = None, handle_sigint: bool = False) -> Chat:
    """Run the REPL on ``keys`` typed at a prompt-toolkit prompt over pipe input.

    ``during(repl, events)`` runs as a task beside the REPL (to press ctrl-c mid-stream).
    """
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    runtime = runtime or _make_runtime(model, system=system)
    provider = replies if isinstance(replies, ScriptedProvider) else ScriptedProvider(replies)
    runtime.ui.register_provider(provider)
    out, err = io.StringIO(), io.StringIO()
    seen: list[Any] = []
    runtime.events.subscribe(seen.append)
    renderer = TranscriptRenderer(out, color=False)
    runtime.events.subscribe(renderer)

    async def main() -> int:
        with create_pipe_input() as pipe:
            pipe.send_text(keys)
            prompt = TerminalPrompt(input=pipe, output=DummyOutput())
            repl = ChatRepl(runtime, prompt, renderer, errors=err, handle_sigint=handle_sigint)
            helper = asyncio.ensure_future(during(repl, seen)) if during else None
            try:
                return await asyncio.wait_for(repl.run(), 10)
            finally:
                if helper is not None:
                    helper.cancel()

    status = asyncio.run(main())
    return Chat(status, out.getvalue(), err.getvalue(), runtime, provider, seen)


@pytest.fixture
def scripted():
    """``scripted(*turns, delay=0)`` -> a ScriptedModel."""
    return lambda *turns, delay=0.0: ScriptedModel(list(turns), delay=delay)


@pytest.fixture
def make_runtime():
    """``make_runtime(model=None, system=None, ask=True)`` -> a Runtime without a store."""
    return _make_runtime


@pytest.fixture
def drive():
    """``drive(keys, model=, replies=, runtime=, during=, system=, handle_sigint=)`` -> Chat."""
    return _drive
