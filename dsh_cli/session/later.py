"""Async question batches at the end of a turn: take up their answers, or say what is left.

    final = await take_up(runtime, final)        # after the door's own turns
    still_pending_line(runtime, sys.stderr)      # one line when batches are left open
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from dsh_cli.core.lines import notice

if TYPE_CHECKING:
    from dsh_cli.runtime import Runtime

__all__ = ["still_pending_line", "take_up"]


async def take_up(runtime: Runtime, final: str) -> str:
    """Until no answer can come: draw the open batches (terminal, plain) or wait for them
    (web, answers file), and give each arrival a turn; the last final text."""
    later = runtime.ui.later
    while later.open() or later.has_arrived():
        if not later.has_arrived():
            if later.drawn_here():
                await later.show_open()
            else:
                await later.wait()
        if not later.has_arrived():
            break  # nobody is asking them any more (the source closed)
        final = await runtime.loop.run_turn(None)
    return final


def still_pending_line(runtime: Runtime, stream: TextIO) -> bool:
    """The one line an agent loop ends with when async batches are still open; whether."""
    open_ = runtime.ui.later.open()
    if not open_:
        return False
    tickets = ", ".join(batch.ticket for batch in open_[:3]) + (", …" if len(open_) > 3 else "")
    count = f"{len(open_)} async question batch{'es' if len(open_) > 1 else ''}"
    stream.write(notice(f"{count} still pending ({tickets}), stored with session "
                        f"{runtime.session_id}: answer with `dsh chat -r {runtime.session_id}`\n"))
    stream.flush()
    return True
