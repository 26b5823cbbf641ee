"""``WebHost``: the web app served by uvicorn inside dsh's own event loop.

``host.provider`` answers questions and ``host.permissions`` (a ``RemotePermissions``) is the
session's permission provider: register it on a ``PermissionGate`` built with
``events=ui.events`` and the browser shows a permission card for each request.

The server itself (bind, uvicorn in dsh's loop, the URL line, a quiet log) is
``WebServer`` (``server.py``), which the web desk of ``dsh attach --web`` shares. The
feed dresses each question with the labels chosen when the same question was last
answered (``ui.recall``, looked up as the batch registers), so the page highlights them
(never chooses or submits them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TextIO

from dsh_cli.core.errors import WEB_BIND_FAILED, WebError
from dsh_cli.interaction import (
    ASK_ABORTED,
    AskContext,
    AskUserQuestionAnswer,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.interaction.traits import AnsweredThroughTable, Concurrent
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.providers.web.feed import EventFeed
from dsh_cli.providers.web.server import WebServer

__all__ = ["WEB_BIND_FAILED", "WebError", "WebHost", "WebQuestionProvider"]

class WebQuestionProvider(AnsweredThroughTable, Concurrent):
    """Shows nothing itself: a browser settles the batch through ``ui.pending``."""

    # the provenance the store keeps with each answer, which comes through the table
    answered_through_table = "web"
    concurrent = True  # the page lists every pending batch: none waits behind another

    def __init__(self) -> None:
        self._closed: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._closed is None:
            self._closed = asyncio.Event()
        return self._closed

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        # The seam registered and announced the batch; the SSE feed carries it to the
        # browser, and the seam returns as soon as the table settles it.
        await self._event().wait()
        raise UserInteractionError("the web host closed", ASK_ABORTED)

    def close(self) -> None:
        self._event().set()


class WebHost:
    """Serve the question composer (and, with ``on_message``, the chat) for one ``ui``."""

    def __init__(
        self,
        ui: UserInteraction,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        open_browser: bool = False,
        on_message: Callable[[str], Any] | None = None,
        stderr: TextIO | None = None,
        debug: bool | None = None,
    ) -> None:
        self.ui = ui
        self.on_message = on_message
        self.server = WebServer(host=host, port=port, open_browser=open_browser,
                                stderr=stderr, debug=debug)
        self.provider = WebQuestionProvider()
        self.permissions = RemotePermissions()
        self.feed = EventFeed(ui.pending)
        self._unsubscribe: Callable[[], None] | None = None

    # what callers and tests read of the server
    host = property(lambda self: self.server.host)
    port = property(lambda self: self.server.port)
    token = property(lambda self: self.server.token)
    csrf = property(lambda self: self.server.csrf)
    origin = property(lambda self: self.server.origin)
    url = property(lambda self: self.server.url)
    debug = property(lambda self: self.server.debug)

    async def start(self) -> None:
        """Bind, serve, subscribe to ``ui.events`` and print the URL on stderr."""
        from dsh_cli.providers.web.app import create_app

        def make_app(web_secrets: Any) -> Any:
            return create_app(self.ui, self.feed, web_secrets, self.on_message, self.permissions,
                              debug=self.note if self.debug else None)

        self._unsubscribe = self.feed.attach(self.ui.events.subscribe)
        try:
            await self.server.start(make_app)
        except BaseException:
            self._unsubscribe()
            self._unsubscribe = None
            raise

    def say(self, text: str) -> None:
        """Write ``text`` on stderr without ever blocking the loop."""
        self.server.say(text)

    def note(self, message: str) -> None:
        """One ``dsh: debug:`` line, with ``DSH_DEBUG`` only."""
        self.server.note(message)

    async def close(self) -> None:
        """Stop serving: pending asks and permission requests end ``ASK_ABORTED``; streams end."""
        self.provider.close()
        self.permissions.close("the web host closed")
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.feed.close()
        await self.server.close()
