"""``AbortSignal``: set once, never cleared; callbacks and awaiters learn of it."""

from __future__ import annotations

import asyncio

from dsh_cli.interaction import AbortSignal


def test_a_signal_starts_live_and_keeps_its_first_reason():
    signal = AbortSignal()
    assert not signal.aborted and signal.reason is None
    signal.abort("turn cancelled")
    signal.abort("process terminating")
    assert signal.aborted and signal.reason == "turn cancelled"


def test_callbacks_run_once_and_at_once_when_already_aborted():
    signal = AbortSignal()
    calls = []
    signal.on_abort(calls.append)
    signal.abort("first")
    signal.abort("second")
    signal.on_abort(lambda reason: calls.append("late:" + reason))
    assert calls == ["first", "late:first"]


def test_a_removed_callback_is_not_called():
    signal = AbortSignal()
    calls = []
    remove = signal.on_abort(calls.append)
    remove()
    remove()
    signal.abort("x")
    assert calls == []


def test_wait_returns_the_reason(run):
    async def main():
        signal = AbortSignal()
        waiter = asyncio.ensure_future(signal.wait())
        await asyncio.sleep(0)
        assert not waiter.done()
        signal.abort("stop")
        assert await waiter == "stop"
        assert await signal.wait() == "stop"

    run(main())


def test_a_child_follows_its_parent_but_not_the_reverse():
    parent = AbortSignal()
    own = parent.child()
    own.abort("child only")
    assert not parent.aborted
    follower = parent.child()
    parent.abort("turn cancelled")
    assert follower.reason == "turn cancelled"
    assert parent.child().aborted
