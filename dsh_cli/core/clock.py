"""Timestamps: every stored one is UTC ISO 8601 with ``Z``; a human reads local time."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["local_time", "utc_stamp"]


def utc_stamp(*, timespec: str = "microseconds") -> str:
    """Now, as a stored timestamp: ``2026-12-03T16:54:43.123456Z``."""
    return datetime.now(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def local_time(stamp: str, form: str = "%Y-%m-%d %H:%M") -> str:
    """A stored timestamp in local time (``?`` for none, the stamp itself if unreadable)."""
    if not stamp:
        return "?"
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if moment.tzinfo is not None:  # a naive stamp (older files) is already local
        moment = moment.astimezone()
    return moment.strftime(form)
