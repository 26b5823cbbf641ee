"""One real ``dsh hub serve`` shared by a module's tests where the process is incidental.

Each test then names its own tokens and teams, and reads only its own entries, so nothing
one test leaves in the shared store or process is seen by the next. A test whose hub's
start, exit, signals, environment or stderr is its subject starts its own
(``harness.hub_serve.hub_process``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

from dsh_cli.hub import HubStore
from harness.hub_serve import DshChild

__all__ = ["own_pending", "serving"]


@contextlib.contextmanager
def serving(location: str, home: Path, *args: str) -> Iterator[str]:
    """A `dsh hub serve` on ``location`` with its own DSH_HOME; yields its URL, then stops it."""
    with HubStore.open(location):
        pass  # migrated before the hub and the tests open it
    hub = DshChild("hub", "serve", "--store", location, "--port", "0", *args,
                   env={"DSH_HOME": str(home)})
    try:
        yield hub.said("dsh: hub http://")
    finally:
        hub.stop()


async def own_pending(store: HubStore, token: str, kind: str = "question", count: int = 1):
    """The pending entries of ``kind`` asked with ``token`` once there are ``count`` (polled);
    another test's entries in the shared store are not this test's."""
    while True:
        found = [e for e in await asyncio.to_thread(store.pending)
                 if e.kind == kind and e.token == token]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
