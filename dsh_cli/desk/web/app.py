"""The web desk's routes: the page of ``dsh web`` in ``desk`` mode, its feed, ``/api/respond``.

Everything passes the ``Guard`` of ``dsh web`` first (token, cookie, Host, Origin, CSRF;
``providers/web/app.py``), and the page, its modules and the feed are served by the same
``page_routes``; only what a POST does differs: it goes to a server, not to a table here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.core.sanitize import sanitize_line
from dsh_cli.desk.protocol import DeskError
from dsh_cli.providers.web.app import Guard, WebSecrets, page_routes, read_frame_body
from dsh_cli.providers.web.shown import refusal_shown

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from dsh_cli.providers.web.feed import EventFeed

__all__ = ["Refused", "RespondWith", "create_desk_app", "desk_reply"]


class Refused(Exception):
    """A body the desk will not forward: ``status``, the page's words, the error ``code``."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


RespondWith = Callable[[bytes], Awaitable[dict[str, Any]]]


async def desk_reply(request: Request, respond_with: RespondWith,
                     note: Callable[[str], object] | None = None) -> Response:
    """One POST of the page through ``respond_with``: its ack, or the refusal the page shows."""
    from starlette.responses import JSONResponse

    body = await read_frame_body(request, note)
    if not isinstance(body, bytes):
        return body
    try:
        ack = await respond_with(body)
    except Refused as refused:
        error = {**DeskError(code=refused.code, message=str(refused)).to_json(),
                 "shown": {"error": sanitize_line(str(refused))}}
        return JSONResponse(error, status_code=refused.status)
    if not ack.get("accepted"):
        ack["shown"] = refusal_shown(ack)  # the page jumps to the answer it names
    return JSONResponse(ack)


def create_desk_app(respond_with: RespondWith, feed: EventFeed, secrets: WebSecrets,
                    note: Callable[[str], object] | None = None) -> Any:
    """The Starlette app of the web desk, wrapped in its ``Guard``: ``respond_with`` takes a
    POST's body to the server that asked and returns its ack (or raises ``Refused``)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    async def respond(request: Request) -> Response:
        return await desk_reply(request, respond_with, note)

    routes = [*page_routes(secrets, "desk", feed),
              Route("/api/respond", respond, methods=["POST"])]
    return Guard(Starlette(routes=routes), secrets)
