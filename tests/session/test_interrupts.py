"""Signals end the main task with the documented status, marking open batches first."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from dsh_cli.session.interrupts import run_main, session_guard, signal_name


class Runtime:
    """Records what the guard does to the session, and in which order."""

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def mark_interrupted(self) -> None:
        self.calls.append("marked")

    def close(self) -> None:
        self.calls.append("closed")


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129),
                                            (signal.SIGINT, 130)])
def test_a_signal_cancels_the_task_and_sets_the_exit_status(signum, status):
    calls: list[str] = []

    async def main() -> int:
        with session_guard(Runtime(calls)):
            asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signum)
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                calls.append("cancelled")
                raise
        return 0

    assert run_main(main()) == status
    if signum is signal.SIGINT:  # an interrupt is not a termination: nothing marked early
        assert calls == ["cancelled", "marked", "closed"]
    else:  # marked while the batch is still open, before the unwinding can settle it
        assert calls == ["marked", "cancelled", "marked", "closed"]


def test_a_normal_end_still_leaves_open_batches_resumable_and_closes():
    calls: list[str] = []

    async def main() -> int:
        with session_guard(Runtime(calls)):
            return 0

    assert run_main(main()) == 0
    assert calls == ["marked", "closed"]


def test_an_unexpected_error_is_one_line_and_status_1(capsys):
    async def main() -> int:
        raise RuntimeError("boom")

    assert run_main(main()) == 1
    assert capsys.readouterr().err == "dsh: INTERNAL_ERROR: RuntimeError: boom\n"


def test_sigint_outside_our_handlers_is_still_130():
    async def main() -> int:
        raise KeyboardInterrupt  # what asyncio's default SIGINT handling raises

    assert run_main(main(), handle_sigint=False) == 130


def test_each_signal_status_has_its_name_and_other_statuses_none():
    assert [signal_name(status) for status in (130, 143, 129)] == ["SIGINT", "SIGTERM", "SIGHUP"]
    assert signal_name(0) is None and signal_name(1) is None
