"""``dsh_client.py`` as the client of a whole-suite run (``conformance client --suite``).

The suite starts every scenario of the suite at once, each with this as its client. A scenario
no test asked about (``DSH_CONFORMANCE_BATCH`` names the asked ones) ends at once, before any
of dsh is imported; an asked one waits for one of the run's slots (lock files in
``DSH_CONFORMANCE_SLOTS``), so the clients run two at a time, as the tests would, rather than
all of them against each other on a loaded machine; then ``dsh_client.main`` runs in this
process, its exit code said on stdout (the suite keeps ``stdout.txt``, not the code).
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

BATCH = "DSH_CONFORMANCE_BATCH"  # the scenarios the tests judge, comma-separated
SLOTS = "DSH_CONFORMANCE_SLOTS"  # a folder of lock files, one per client allowed at once
EXITED = "dsh_client.py exited with "  # the last line of stdout.txt, then the code


def take_slot(folder: Path) -> int:
    """A descriptor holding one of the slots' locks (held until this process ends)."""
    slots = sorted(folder.iterdir())
    for slot in slots:
        fd = os.open(slot, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            os.close(fd)
    fd = os.open(slots[os.getpid() % len(slots)], os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # every slot busy: wait for one
    return fd


def main() -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario not in os.environ.get(BATCH, "").split(","):
        return 0
    take_slot(Path(os.environ[SLOTS]))
    import asyncio

    import dsh_client

    code = asyncio.run(dsh_client.main(sys.argv[-1], scenario))
    print(f"{EXITED}{code}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
