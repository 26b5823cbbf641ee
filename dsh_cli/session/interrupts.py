"""Process signals for the async commands: SIGINT, SIGTERM and SIGHUP end the main task.

The task is cancelled, so every ``finally`` runs: the terminal UI closes and restores
the screen, an open question stays resumable, the store is flushed. The exit status is
then 130, 143 or 129 (``EXIT_CODES``; ``signal_name`` turns a status back into its name).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import INTERNAL_ERROR, format_line

if TYPE_CHECKING:
    from dsh_cli.runtime import Runtime

__all__ = ["EXIT_CODES", "on_termination", "run_main", "session_guard", "signal_name"]

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
_termination_hooks: list[Callable[[], None]] = []
_interrupt_hooks: list[Callable[[], None]] = []  # those that run on SIGINT too


def signal_name(status: int) -> str | None:
    """``SIGINT`` for 130, ``SIGTERM`` for 143, ``SIGHUP`` for 129; None for other statuses."""
    return next((signum.name for signum, code in EXIT_CODES.items() if code == status), None)


def on_termination(hook: Callable[[], None], *, sigint: bool = False) -> Callable[[], None]:
    """Run ``hook`` the moment SIGTERM or SIGHUP arrives, before anything is cancelled.

    The session store uses it to mark open question batches interrupted while they are
    still open, so the unwinding that follows cannot record them as aborted. ``sigint``:
    on SIGINT too (``dsh mcp``, where ctrl-c cancels no turn of a human's own).
    """
    hooks = _interrupt_hooks if sigint else _termination_hooks
    hooks.append(hook)
    return lambda: hooks.remove(hook) if hook in hooks else None


def run_main(main: Coroutine[Any, Any, int], *, handle_sigint: bool = True) -> int:
    """Run ``main`` to its exit status; a handled signal cancels it and sets the status.

    An unexpected exception is one stderr line and status 1 (``DSH_DEBUG=1`` shows the
    traceback): a bug must not bury the terminal in a stack dump. The loop is asyncio's
    own with one addition: start-up ends when it first waits (``core.startup``).
    """
    from dsh_cli.core.startup import release_collection, startup_loop

    try:
        with asyncio.Runner(loop_factory=startup_loop) as runner:
            return runner.run(_supervise(main, handle_sigint))
    except KeyboardInterrupt:  # SIGINT outside any handler of ours (start-up, shutdown)
        return EXIT_CODES[signal.SIGINT]
    except BrokenPipeError:  # `dsh … | head -1`: the reader has what it wanted
        from dsh_cli.core.streams import stdout_gone

        return stdout_gone()
    except Exception as error:
        if os.environ.get("DSH_DEBUG"):
            raise
        print(format_line(INTERNAL_ERROR, f"{type(error).__name__}: {error}"), file=sys.stderr)
        return 1
    finally:
        asyncio.set_event_loop(None)  # as asyncio.run leaves it
        release_collection()  # a command that never waited


async def _supervise(main: Coroutine[Any, Any, int], handle_sigint: bool) -> int:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main)
    received: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        if not received:
            received.append(signum)
            hooks = _interrupt_hooks if signum is signal.SIGINT else \
                [*_termination_hooks, *_interrupt_hooks]
            for hook in list(hooks):
                with contextlib.suppress(Exception):
                    hook()
        task.cancel()  # again on a repeated signal: nothing may swallow the stop

    handled = [s for s in EXIT_CODES if handle_sigint or s is not signal.SIGINT]
    for signum in handled:
        loop.add_signal_handler(signum, stop, signum)
    try:
        status = await task
    except asyncio.CancelledError:
        if received:
            return EXIT_CODES[received[0]]
        raise
    else:
        return EXIT_CODES[received[0]] if received else status
    finally:
        for signum in handled:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)


@contextlib.contextmanager
def session_guard(runtime: Runtime) -> Iterator[Runtime]:
    """Keep a session resumable however it ends, then close it.

    Open question batches are marked interrupted the moment SIGTERM or SIGHUP arrives
    (before the unwinding could record them as aborted) and again on the way out.
    """
    forget = on_termination(runtime.mark_interrupted)
    try:
        yield runtime
    finally:
        forget()
        runtime.mark_interrupted()
        runtime.close()
