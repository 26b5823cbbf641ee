"""The desk providers: a batch or a permission request answered at a ``dsh attach`` desk.

``DeskProvider`` (questions) and ``DeskPermissions`` (permission requests) hand what they
are asked to the hub of desks (``desk_hub.py``) and wait: for a desk to take it within
``TAKE_WITHIN`` seconds (with none attached, ``NO_DESK`` at once, or after ``wait``), then
for the answer a desk sends through the pending table. Every attached desk too full to
hold a batch ends it ``TOO_MANY_PENDING`` with the desk's words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from dsh_cli.core.errors import (
    NO_PERMISSION_PROVIDER,
    NO_PROVIDER,
    TOO_MANY_PENDING,
    PermissionRequestError,
    UserInteractionError,
)
from dsh_cli.core.tasks import close_task
from dsh_cli.interaction import AskContext, AskUserQuestionAnswer
from dsh_cli.interaction.traits import AnsweredThroughTable, Concurrent, Seen
from dsh_cli.mcp_server.desk_hub import DeskHub

if TYPE_CHECKING:
    from dsh_cli.permissions.vocabulary import PermissionDecision, PermissionRequest

__all__ = ["NOT_TAKEN", "NO_DESK", "TAKE_WITHIN", "DeskHub", "DeskPermissions",
           "DeskProvider"]

NO_DESK = "no one is at the dsh desk: run `dsh attach` in a terminal"
TAKE_WITHIN = 5.0  # seconds a connected desk has to take a batch before it does not count
NOT_TAKEN = ("no dsh desk took the {what} within {seconds:g} s (a desk that is stopped or "
             "does not answer does not count): run `dsh attach` in a terminal")


class DeskProvider(AnsweredThroughTable, Concurrent, Seen):
    """Answers come from a desk through the pending table; with no desk, ``NO_PROVIDER``."""

    # the provenance the store keeps with each answer, which comes through the table
    answered_through_table = "desk"
    concurrent = True  # the inbox lists every pending batch: none waits behind another

    def __init__(self, hub: DeskHub, *, wait: float = 0.0,
                 alert: Callable[[], None] | None = None) -> None:
        self.hub = hub
        self.wait = wait
        self._alert = alert

    def seen(self, rpc_id: str) -> bool:
        """Whether a desk has taken ``rpc_id`` (it is in some human's inbox)."""
        return self.hub.seen(rpc_id)

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        entry = self.hub.ui.pending.get(context.rpc_id)
        if entry is not None and entry.delivery == "async":
            # no tool call waits for it: pending under its ticket (until its timeout, or
            # its session ends) for the first desk that takes it, a desk attaching later in
            # its replay; every attached desk too full to hold it ends it, as a waiting one
            await self.hub.wait_taken(context.rpc_id, None)
            full = self.hub.too_full(context.rpc_id)
            if full is not None:
                raise UserInteractionError(full, TOO_MANY_PENDING)
            await asyncio.get_running_loop().create_future()
        found = await _desk_takes(self.hub, context.rpc_id, self.wait, self._alert,
                                  "question")
        if found is not None:
            full = self.hub.too_full(context.rpc_id)
            raise UserInteractionError(found, NO_PROVIDER if full is None else TOO_MANY_PENDING)
        await asyncio.get_running_loop().create_future()  # a desk settles it, or the seam does
        raise AssertionError("unreachable")


async def _desk_takes(hub: DeskHub, rpc_id: str, wait: float,
                      alert: Callable[[], None] | None, what: str) -> str | None:
    """None once a desk has taken ``rpc_id``; else why no desk will (``NO_DESK``, ``NOT_TAKEN``).

    With no desk attached it fails at once, or waits up to ``wait`` seconds for one; an
    attached desk then has ``TAKE_WITHIN`` seconds (or what is left of ``wait``) to take it.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    if not hub.connected:
        if wait > 0 and alert is not None:
            hub.ring(alert)  # batches are handed over at once: one bell, not one each
        if wait <= 0 or not await hub.wait_for_desk(wait):
            return NO_DESK
    if not await hub.wait_taken(rpc_id, max(TAKE_WITHIN, end - loop.time())):
        return hub.too_full(rpc_id) or NOT_TAKEN.format(what=what, seconds=TAKE_WITHIN)
    return None


class DeskPermissions:
    """Permission requests decided at a desk; with none, ``NO_PERMISSION_PROVIDER`` at once."""

    def __init__(self, hub: DeskHub, *, wait: float = 0.0,
                 alert: Callable[[], None] | None = None) -> None:
        self.hub = hub
        self.wait = wait
        self._alert = alert

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        # pending first, so a desk that attaches during the wait gets it in its replay
        decided = asyncio.ensure_future(self.hub.permissions.decide(request, rpc_id))
        await asyncio.sleep(0)  # the request is pending in the table now
        self.hub.awaited(rpc_id)
        taking = asyncio.ensure_future(_desk_takes(self.hub, rpc_id, self.wait, self._alert,
                                                   "permission request"))
        try:
            # a decision that comes first stands, taken or not
            await asyncio.wait({decided, taking}, return_when=asyncio.FIRST_COMPLETED)
            if not decided.done():
                found = taking.result()
                if found is not None:
                    raise PermissionRequestError(found, NO_PERMISSION_PROVIDER)
            return await decided
        finally:
            await close_task(taking)
            await close_task(decided)
