"""``dsh_client.py`` as the client of a whole-suite run (``conformance client --suite``).

The suite starts every scenario of the suite at once, each with this as its client. A scenario
no test asked about (``DSH_CONFORMANCE_BATCH`` names the asked ones) ends at once, before any
of dsh is imported; an asked one waits for one of the run's slots (lock files in
``DSH_CONFORMANCE_SLOTS``), so the clients run two at a time, as the tests would, rather than
all of them against each other on a loaded machine; then ``dsh_client.main`` runs in a process
``client_runner.py`` forks (``DSH_CONFORMANCE_RUNNER``, its socket: the MCP SDK imported once
for the whole run, not in every client), or in this one without a runner, its exit code said
on stdout (the suite keeps ``stdout.txt``, not the code).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
from pathlib import Path

BATCH = "DSH_CONFORMANCE_BATCH"  # the scenarios the tests judge, comma-separated
SLOTS = "DSH_CONFORMANCE_SLOTS"  # a folder of lock files, one per client allowed at once
EXITED = "dsh_client.py exited with "  # the last line of stdout.txt, then the code
RUNNER = "DSH_CONFORMANCE_RUNNER"  # client_runner.py's socket, when one runs
CODE = "exited "  # client_runner.py's reply, then the forked client's exit code


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
    if os.environ.get(RUNNER):
        code = forked(os.environ[RUNNER])
    else:
        import asyncio

        import dsh_client

        code = asyncio.run(dsh_client.main(sys.argv[-1], scenario))
    print(f"{EXITED}{code}", flush=True)
    return code


def forked(path: str) -> int:
    """This client run by a child of ``client_runner.py`` on this process's standard
    descriptors; its exit code (the child is killed if this process ends first)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as link:
        link.connect(path)
        request = {"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd()}
        socket.send_fds(link, [json.dumps(request).encode()], [0, 1, 2])
        reply = link.recv(64).decode()
    if not reply.startswith(CODE):
        print(f"client_runner.py ended without the client's exit code: {reply!r}",
              file=sys.stderr)
        return 1
    return int(reply.removeprefix(CODE))


if __name__ == "__main__":
    sys.exit(main())
