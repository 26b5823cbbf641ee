"""An ACP client for the tests: the SDK's own client side, driving the real ``dsh acp``.

``AcpClient`` records every ``session/update`` and answers the agent's requests from
queues the test fills (or futures it settles), so a test says what the human does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.schema import ClientCapabilities, ElicitationCapabilities, Implementation

from harness.dsh_under_test import DSH

WAIT = 30.0


def run(test: Any) -> Any:
    """An async test body as a plain test (the suite runs no async plugin)."""
    import functools

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(asyncio.wait_for(test(*args, **kwargs), WAIT * 2))

    return wrapper


class Recorder:
    """The client's side of the connection: what the agent sends, and the human's replies."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.forms: asyncio.Queue[tuple[dict[str, Any], asyncio.Future[Any]]] = asyncio.Queue()
        self.permissions: asyncio.Queue[tuple[dict[str, Any], asyncio.Future[Any]]] = (
            asyncio.Queue())
        self.changed = asyncio.Event()
        self.completed: asyncio.Queue[str] = asyncio.Queue()  # elicitation/complete ids
        self.raw: list[dict[str, Any]] = []  # every message from the agent, as sent

    def observe(self, event: Any) -> None:
        if event.direction.value == "incoming":
            self.raw.append(event.message)

    def _raw_params(self, method: str) -> dict[str, Any]:
        return next(m["params"] for m in reversed(self.raw) if m.get("method") == method)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update.model_dump(by_alias=True, exclude_none=True))
        self.changed.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **_: Any) -> Any:
        reply = asyncio.get_running_loop().create_future()
        await self.permissions.put((self._raw_params("session/request_permission"), reply))
        return await reply

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        reply = asyncio.get_running_loop().create_future()
        params = self._raw_params("elicitation/create")
        await self.forms.put((params, reply))
        return await reply

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        await self.completed.put(elicitation_id)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u.get("sessionUpdate") == kind]

    def text(self) -> str:
        return "".join(u["content"]["text"] for u in self.of("agent_message_chunk"))


@contextlib.asynccontextmanager
async def started(*args: str, form: bool = True, url: bool = False,
                  name: str = "test-editor", env: dict[str, str] | None = None
                  ) -> AsyncIterator[tuple[Any, Recorder, Any]]:
    """``dsh acp ARGS`` as a child, initialized; (connection, recorder, process)."""
    recorder = Recorder()
    env = dict(os.environ) if env is None else env
    async with spawn_agent_process(recorder, DSH, "acp", *args, env=env,
                                   use_unstable_protocol=True,
                                   observers=[recorder.observe]) as (conn, process):
        elicitation = ElicitationCapabilities(form={} if form else None,
                                              url={} if url else None)
        reply = await asyncio.wait_for(conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(elicitation=elicitation),
            client_info=Implementation(name=name, version="1.0")), WAIT)
        assert reply.agent_capabilities.load_session is True
        yield conn, recorder, process


def script(tmp_path: Path, *turns: dict[str, Any], name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"script:{path}"


def ask(*questions: dict[str, Any], call_id: str = "ask", **extra: Any) -> dict[str, Any]:
    """A scripted turn that calls ask_user_question with ``questions``."""
    return {"tool_calls": [{"id": call_id, "name": "ask_user_question",
                            "arguments": {"questions": list(questions), **extra}}]}


DB = {"id": "db", "header": "Database", "question": "Which database?",
      "options": [{"label": "PostgreSQL", "description": "the server one"},
                  {"label": "SQLite", "preview": "file: app.db"}]}
FEATURES = {"id": "features", "question": "Which features?", "multi_select": True,
            "options": [{"label": "CI"}, {"label": "Auth"}, {"label": "Docs"}]}
PYTHON = sys.executable


def prompt_turn(conn: Any, session_id: str, text: str = "go") -> asyncio.Future[Any]:
    """A ``session/prompt`` of ``text`` under way (awaited for its stop reason)."""
    return asyncio.ensure_future(conn.prompt(session_id=session_id,
                                             prompt=[{"type": "text", "text": text}]))
