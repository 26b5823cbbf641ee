"""The question provider of an ACP session: each batch one ``elicitation/create`` (form).

The client's reply settles the batch: ``accept`` → the content as the answer batch (the
seam validates it), ``decline`` → ``ASK_DECLINED``, ``cancel`` → ``ASK_CANCELLED``. A reply
the client could not give (an error, the connection gone) is ``ASK_ABORTED``; so is a
batch whose turn was cancelled, which the seam settles before the reply comes (the request
is then forgotten: a late reply is dropped). Batches are concurrent: an async batch's form
stays open while the turn goes on.

``UrlPages`` hands an MCP server's URL request to a client with URL mode, in place of
dsh's consent question, and the server's word that the page is done on as
``elicitation/complete``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.acp.forms import answer_of, form_message, form_schema
from dsh_cli.core.errors import ASK_ABORTED, ASK_CANCELLED, ASK_DECLINED, UserInteractionError
from dsh_cli.interaction.traits import AnsweredBy, Concurrent
from dsh_cli.interaction.vocabulary import AskContext

if TYPE_CHECKING:
    from dsh_cli.mcp_client.forms.asking import UrlRequest

__all__ = ["FormQuestions", "UrlPages"]

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
Post = Callable[[dict[str, Any]], None]


class FormQuestions(AnsweredBy, Concurrent):
    """Asks the client with a form; ``answered_by`` is the client's name from ``initialize``."""

    concurrent = True

    def __init__(self, request: Request, session_id: str, answered_by: str) -> None:
        self._request = request
        self._session_id = session_id
        self.answered_by = answered_by

    async def ask(self, context: AskContext) -> object:
        batch = context.request
        params: dict[str, Any] = {"sessionId": self._session_id, "mode": "form",
                                  "message": form_message(batch),
                                  "requestedSchema": form_schema(batch)}
        if batch.call_id:
            params["toolCallId"] = batch.call_id
        try:
            reply = await self._request("elicitation/create", params)
        except (ConnectionError, OSError) as gone:
            raise UserInteractionError(f"the ACP client went away ({gone})", ASK_ABORTED) from None
        except Exception as error:  # the client answered with a JSON-RPC error
            raise UserInteractionError(f"the ACP client could not show the form: {error}",
                                       ASK_ABORTED) from None
        action = reply.get("action") if isinstance(reply, dict) else None
        if action == "accept":
            return answer_of(batch, reply.get("content"))
        if action == "decline":
            raise UserInteractionError("the user declined to answer", ASK_DECLINED)
        if action == "cancel":
            raise UserInteractionError("the user cancelled the questions", ASK_CANCELLED)
        raise UserInteractionError(f"the ACP client replied with no known action: {action!r}",
                                   ASK_ABORTED)


class UrlPages:
    """An MCP server's URL request as the client's own URL-mode ``elicitation/create``, for a
    client that advertises ``elicitation.url``: the client shows the host, asks its human
    and opens the page; its reply is the server's answer ("cancel" when it gives none).

    Each request gets an ``elicitationId`` of dsh's own (two servers may use the same id);
    an accepted one is remembered under the server's id, so the server's completion
    reaches the client as ``elicitation/complete`` with the id the client knows."""

    def __init__(self, request: Request, session_id: str, post: Post) -> None:
        self._request = request
        self._session_id = session_id
        self._post = post
        self._open: OrderedDict[tuple[str, str], str] = OrderedDict()

    async def __call__(self, asked: UrlRequest) -> str:
        from dsh_cli.core.ids import mint_rpc_id
        from dsh_cli.core.limits import ACP_OPEN_PAGES

        message = f"{asked.server} asks: {asked.message}" if asked.message else (
            f"{asked.server} asks you to open a page")
        ident = mint_rpc_id()
        params: dict[str, Any] = {"sessionId": self._session_id, "mode": "url",
                                  "message": message, "url": asked.url, "elicitationId": ident}
        if asked.call_id:
            params["toolCallId"] = asked.call_id
        try:
            reply = await self._request("elicitation/create", params)
        except Exception:  # an error reply, the client gone: nobody agreed to anything
            return "cancel"
        action = reply.get("action") if isinstance(reply, dict) else None
        if action == "accept" and asked.elicitation_id is not None:  # 2025-11-25 only
            self._open[(asked.server, asked.elicitation_id)] = ident
            while len(self._open) > ACP_OPEN_PAGES:
                self._open.popitem(last=False)
        return action if action in ("accept", "decline", "cancel") else "cancel"

    def completed(self, server: str, elicitation_id: str) -> None:
        """Forward the server's completion of a page this client opened (once); an id it
        never handed here is dropped."""
        ident = self._open.pop((server, elicitation_id), None)
        if ident is not None:
            self._post({"jsonrpc": "2.0", "method": "elicitation/complete",
                        "params": {"elicitationId": ident}})
