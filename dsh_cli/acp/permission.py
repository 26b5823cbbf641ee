"""The permission provider of an ACP session: each request a ``session/request_permission``.

Four options (``messages.PERMISSION_OPTIONS``): allow once, allow for this session and
always allow (both of kind ``allow_always``, told apart by ``optionId``), deny
(``reject_once``). The gate keeps the session and "always" grants itself, so a client that
remembers nothing is asked once. A ``cancelled`` outcome is the turn's cancellation: the
session's turn is cancelled and the request ends ``ASK_ABORTED``, never as a denial.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from dsh_cli.acp.messages import PERMISSION_OPTIONS, permission_request
from dsh_cli.core.errors import ASK_ABORTED, PermissionRequestError
from dsh_cli.permissions.vocabulary import PermissionDecision, PermissionRequest

__all__ = ["OptionPermissions"]

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]


class OptionPermissions:
    """Asks the client to pick one of dsh's four options."""

    def __init__(self, request: Request, session_id: str,
                 cancel_turn: Callable[[str], None]) -> None:
        self._request = request
        self._session_id = session_id
        self._cancel_turn = cancel_turn

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        title = request.tool if request.server is None else f"{request.tool} ({request.server})"
        params = permission_request(self._session_id, request.call_id, title, request.arguments)
        try:
            reply = await self._request("session/request_permission", params)
        except (ConnectionError, OSError) as gone:
            raise PermissionRequestError(f"the ACP client went away ({gone})",
                                         ASK_ABORTED) from None
        except Exception as error:
            raise PermissionRequestError(f"the ACP client could not ask: {error}",
                                         ASK_ABORTED) from None
        outcome = reply.get("outcome") if isinstance(reply, dict) else None
        kind = outcome.get("outcome") if isinstance(outcome, dict) else None
        if kind == "cancelled":
            self._cancel_turn("the ACP client cancelled the permission request")
            raise PermissionRequestError("the permission request was cancelled", ASK_ABORTED)
        option = outcome.get("optionId") if isinstance(outcome, dict) else None
        if kind != "selected" or option not in PERMISSION_OPTIONS:
            raise PermissionRequestError(
                f"the ACP client picked no option dsh offered ({str(option)[:80]!r})",
                ASK_ABORTED)
        return PermissionDecision(PERMISSION_OPTIONS[option][2])  # type: ignore[arg-type]
