"""Durations an environment variable may shorten or lengthen (the tests do, to wait less)."""

from __future__ import annotations

import math
import os

__all__ = ["seconds_from_env"]


def seconds_from_env(name: str, default: float) -> float:
    """``name``'s value when it is a positive, finite number of seconds, else ``default``."""
    try:
        given = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return given if given > 0 and math.isfinite(given) else default
