"""``dsh mcp`` ends on SIGTERM and SIGINT while the agent keeps stdin open, batches stored."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from harness.mcp_util import BATCH, bounded, client, jsonl_desk

from dsh_cli.store import SessionStore

BOUND = 5.0  # generous: the spec asks for 1 s; the measured figure is printed


def exit_state(pid: int) -> tuple[str, int | None]:
    """``/proc/PID/stat``'s state, and the exit status once the process is a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):  # reaped before, or between open and read
        return "gone", None
    state = fields[0]
    # field 52 (exit_code, in waitpid form) follows the state at index 49 here
    status = int(fields[49]) >> 8 if state in ("Z", "X") and len(fields) > 49 else None
    return state, status


async def ended(pid: int, ceiling: float) -> tuple[float, int | None]:
    """Seconds until ``pid`` has exited (a zombie its parent has not reaped yet counts)."""
    start = time.monotonic()
    while time.monotonic() - start < ceiling:
        state, status = exit_state(pid)
        if state in ("Z", "X", "gone"):
            return time.monotonic() - start, status
        await asyncio.sleep(0.01)
    raise AssertionError(f"dsh mcp pid {pid} still runs {ceiling} s after the signal")


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_dsh_mcp_with_stdin_open_and_the_pending_batch_is_interrupted(
        signum, status):
    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            pid = requested["source"]["pid"]
            os.kill(pid, signum)  # the client still holds dsh mcp's stdin open
            took, exit_status = await ended(pid, BOUND)
            call.cancel()
            return requested, took, exit_status

    requested, took, exit_status = bounded(main())
    print(f"dsh mcp ended {took:.3f} s after {signal.Signals(signum).name}")
    assert took < BOUND
    # read off the zombie; None when the client's transport reaped it first (a busy machine),
    # which leaves no status to read: the stored batch below still shows how it ended
    assert exit_status in (status, None)
    with SessionStore.open() as store:
        [session] = store.list_sessions()
        [batch] = store.question_batches(session.id)
    assert batch.rpc_id == requested["rpc_id"]
    assert batch.status == "interrupted"


def test_sigterm_ends_dsh_mcp_at_once_with_an_async_batch_pending():
    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            result = await mcp.call_tool("ask_user_question", {**BATCH, "delivery": "async"})
            requested = await desk.event("question/requested")
            pid = requested["source"]["pid"]
            os.kill(pid, signal.SIGTERM)
            took, exit_status = await ended(pid, BOUND)
            return result, requested, took, exit_status

    result, requested, took, exit_status = bounded(main())
    print(f"dsh mcp ended {took:.3f} s after SIGTERM with an async batch pending")
    assert result.structured_content == {"accepted": True, "ticket": requested["rpc_id"]}
    assert took < BOUND
    assert exit_status in (143, None)
    with SessionStore.open() as store:
        [session] = store.list_sessions()
        [batch] = store.question_batches(session.id)
    assert batch.status == "interrupted"
