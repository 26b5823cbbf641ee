"""Driving the installed ``dsh`` in a pseudo-terminal (pexpect), through a bash command line."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any


def spawn(command: str, cwd: str, *, timeout: float = 8.0):
    """``bash -c command`` on an 80×24 pseudo-terminal, the installed ``dsh`` on PATH."""
    import pexpect

    # No terminal answers cursor-position requests here; prompt-toolkit must not wait for one.
    env = dict(os.environ, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    return pexpect.spawn("bash", ["--noprofile", "--norc", "-c", command], env=env,
                         cwd=cwd, encoding="utf-8", timeout=timeout, dimensions=(24, 80))


def finish(child) -> str:
    """Everything the child printed until it exits; the child is closed."""
    import pexpect

    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    return output


@contextlib.asynccontextmanager
async def idle_terminal_desk(dsh: str, cwd: str) -> AsyncIterator[Any]:
    """A terminal ``dsh attach`` in a pseudo-terminal, once it has drawn its empty list;
    force-closed however the test ends."""
    child = spawn(f"{dsh} attach", cwd, timeout=20)
    try:
        await asyncio.to_thread(child.expect, "nothing pending")
        yield child
    finally:
        child.close(force=True)
