"""One ACP session: a dsh runtime (``build_runtime``), its MCP tools and gate
(``session_tools``), its question and permission providers, and its turns.

The tools live in a task of their own (``_host``) from ``open`` to ``close``: the MCP client
must close its servers in the task that started them, and the SDK runs each request in
a new task. One turn at a time: a second prompt while one runs is refused, never queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_cli.acp.updates import live_update, replayed_updates, session_update
from dsh_cli.core.errors import HarnessError
from dsh_cli.core.signal import AbortSignal

if TYPE_CHECKING:
    from dsh_cli.runtime import Runtime
    from dsh_cli.session.tools import ToolPlan
    from dsh_cli.sources import Prepared

__all__ = ["CANCELLED", "AcpSession", "Client", "PromptRunning"]

CANCELLED = "ACP-side cancellation"  # the abort reason the seam's ASK_ABORTED carries

Post = Callable[[dict[str, Any]], None]
Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
Drain = Callable[[], Awaitable[None]]
REPLAY_BATCH = 64  # replayed updates written before waiting for the client to read them


class PromptRunning(Exception):
    """A prompt came while the session's turn was running."""


@dataclass(frozen=True)
class Client:
    """What ``initialize`` said of the client, kept for its sessions."""

    name: str = "ACP client"
    form: bool = False  # elicitation.form advertised
    url: bool = False  # elicitation.url advertised: MCP servers' URL requests go to it
    files: bool = False  # fs.readTextFile and fs.writeTextFile (kept; dsh has no file tools)
    terminal: bool = False  # terminal/* (kept; dsh runs no commands of its own)


class AcpSession:
    """A live dsh session driven by one ACP client."""

    def __init__(self, runtime: Runtime, plan: ToolPlan, client: Client, *, post: Post,
                 request: Request, drain: Drain, source: Prepared | None = None) -> None:
        self.runtime = runtime
        self._plan = plan
        self._client = client
        self._post = post
        self._request = request
        self._drain = drain
        # --web or --answers: it answers the questions, in place of the client's forms
        self._source = source if source is not None and source.name != "none" else None
        self._signal: AbortSignal | None = None
        self._turn: asyncio.Future[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing = asyncio.Event()
        self._host_task: asyncio.Task[None] | None = None

    @property
    def session_id(self) -> str:
        return self.runtime.session_id

    async def open(self) -> None:
        """Start the session's MCP servers and providers; raises what starting them raised."""
        self._ready = asyncio.get_running_loop().create_future()
        self._host_task = asyncio.ensure_future(self._host())
        await asyncio.shield(self._ready)

    async def replay(self) -> None:
        """Show the stored conversation again (``session/load``), before the reply; a
        long one is written as the client reads it, never all held at once."""
        for count, update in enumerate(replayed_updates(self.runtime.loop.messages), 1):
            self._post(session_update(self.session_id, update))
            if count % REPLAY_BATCH == 0:
                await self._drain()

    async def prompt(self, text: str) -> str:
        """Run one turn on ``text``; the ACP stop reason."""
        if self._turn is not None:
            raise PromptRunning(f"session {self.session_id} is running a prompt already")
        from dsh_cli.core.errors import TURN_LIMIT

        loop = self.runtime.loop
        signal = self._signal = AbortSignal()
        self._turn = asyncio.get_running_loop().create_future()
        try:
            if loop.pending_tool_calls():  # a loaded session's batch is asked again first
                await loop.run_turn(None, signal)
            await loop.run_turn(text, signal)
            reason = "end_turn"
        except HarnessError as error:
            if signal.aborted:
                reason = "cancelled"
            elif error.code == TURN_LIMIT:
                reason = "max_turn_requests"
            else:
                raise
        finally:
            self._turn.set_result(None)
            self._turn = None
            self._signal = None
        return reason

    def cancel(self, reason: str = CANCELLED) -> None:
        """End the running turn (if any) as cancelled: its questions and requests abort."""
        if self._signal is not None:
            self._signal.abort(reason)

    async def close(self) -> None:
        """Cancel the turn, wait for it, stop the servers and close the runtime."""
        self.cancel()
        if self._turn is not None:
            await asyncio.shield(self._turn)
        self._closing.set()
        if self._host_task is not None:
            await self._host_task
        self.runtime.close()

    async def _host(self) -> None:
        """Hold the session's tools and providers open until ``close``."""
        from dsh_cli.acp.permission import OptionPermissions
        from dsh_cli.acp.questions import FormQuestions, UrlPages
        from dsh_cli.session.interrupts import on_termination
        from dsh_cli.session.tools import session_tools

        assert self._ready is not None
        runtime = self.runtime
        questions = None
        if self._source is None and self._client.form:
            questions = FormQuestions(self._request, self.session_id, self._client.name)
        try:
            async with contextlib.AsyncExitStack() as stack:
                urls = (UrlPages(self._request, self.session_id, self._post) if self._client.url
                        else None)
                gate = await stack.enter_async_context(session_tools(
                    runtime, self._plan, sys.stderr,
                    can_answer=questions is not None or self._source is not None,
                    url_asker=urls))
                if questions is not None:
                    stack.callback(runtime.ui.register_provider(questions))
                elif self._source is not None:  # the browser page (its URL on stderr), a file
                    # no gate: permission requests stay the client's own, as ACP has them
                    await stack.enter_async_context(self._source.attach(runtime.ui))
                if gate is not None:
                    stack.callback(gate.register_provider(
                        OptionPermissions(self._request, self.session_id, self.cancel)))
                stack.callback(runtime.events.subscribe(self._on_event))
                # SIGTERM/SIGHUP (the editor quitting): open batches stay resumable, as in
                # dsh run; only the client's own hang-up (EOF) aborts them
                stack.callback(on_termination(runtime.mark_interrupted))
                runtime.ui.later.watch()  # a loaded session's async batches are asked again
                self._ready.set_result(None)
                await self._closing.wait()
        except BaseException as error:
            if not self._ready.done():
                self._ready.set_exception(error)
                return
            raise

    def _on_event(self, event: object) -> None:
        update = live_update(event)  # type: ignore[arg-type]
        if update is not None:
            self._post(session_update(self.session_id, update))
