"""The browser the browser tests drive: Debian's Chromium, headless, nothing of its own online."""

from __future__ import annotations

import os

import pytest

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "needs_chromium"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                    reason=f"browser tests need Debian's chromium at {CHROMIUM}")
