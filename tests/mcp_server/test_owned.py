"""What tickets and tasks keep alike (``mcp_server/owned/``): counts by owner, and open work
ended with one grace at exit."""

from __future__ import annotations

import asyncio

from dsh_cli.mcp_server.owned.work import OwnerCounts, end_with_grace


def test_an_owner_with_nothing_counted_has_no_key():
    counts = OwnerCounts()
    counts.up("a")
    counts.up("a")
    counts.up("b")
    counts.down("a")
    assert counts["a"] == 1 and "a" in counts
    counts.down("a")
    counts.down("b")
    counts.down("c")  # never counted: stays absent, never negative
    assert counts["a"] == 0 and "a" not in counts and "c" not in counts
    assert counts._of == {}


def test_work_that_settles_within_the_grace_ends_itself_and_stuck_work_is_cancelled():
    async def main() -> tuple[str, bool, bool]:
        release = asyncio.Event()

        async def settles() -> str:
            await release.wait()
            return "recorded"

        async def stuck() -> None:
            await asyncio.Event().wait()

        settling = asyncio.ensure_future(settles())
        hanging = asyncio.ensure_future(stuck())
        loop = asyncio.get_running_loop()
        loop.call_soon(release.set)  # the aborted batch settles itself at once
        await end_with_grace([settling, hanging], grace=0.2)
        return settling.result(), hanging.cancelled(), hanging.done()

    assert asyncio.run(main()) == ("recorded", True, True)

