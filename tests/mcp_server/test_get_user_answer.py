"""``get_user_answer`` in process: a wait past the cap is clamped, and the result says so."""

from __future__ import annotations

import asyncio
import json

from dsh_cli.mcp_server import get_user_answer as module
from dsh_cli.mcp_server.service import TICKET_KIND
from dsh_cli.mcp_server.tickets import Tickets


def test_a_wait_past_the_cap_waits_the_cap_and_the_pending_result_says_so(monkeypatch):
    monkeypatch.setattr(module, "TICKET_WAIT_SECONDS", 0.05)  # the 55 s cap, shrunk

    async def main():
        store = Tickets()
        store.add("q_1", "a", asyncio.get_running_loop().create_future(), kind=TICKET_KIND)
        return await asyncio.wait_for(
            module.get_user_answer(store, {"ticket": "q_1", "wait_seconds": 10**6}, "a"), 10)

    result = asyncio.run(main())
    assert result.is_error is False
    assert json.loads(result.content) == {"status": "pending", "ticket": "q_1",
                                          "waited_seconds": 0.05}


def test_the_shipped_cap_is_under_a_minute_and_stated():
    assert 0 < module.TICKET_WAIT_SECONDS < 60
    assert f"at most {module.TICKET_WAIT_SECONDS:g} seconds" in module.DESCRIPTION
