"""One of our fake MCP servers (``tests/fakes/``) over streamable HTTP, for a module to share.

A stdio server is a child every run starts (~1 CPU-s of SDK imports each); one HTTP server
started once per module serves every run whose test is not about the server's start-up.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["served"]

FAKES = Path(__file__).resolve().parents[1] / "fakes"


@contextlib.contextmanager
def served(fake: str, *options: str) -> Iterator[str]:
    """``python tests/fakes/FAKE --http OPTIONS`` while it runs (FAKE may be a path to a
    server elsewhere in tests/); yields its URL."""
    process = subprocess.Popen([sys.executable, str(FAKES / fake), "--http", *options],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()  # printed once the port is bound
        assert url.startswith("http://127.0.0.1:"), f"{fake} did not start: {url!r}"
        yield url
    finally:
        process.kill()
        process.wait(timeout=10)
