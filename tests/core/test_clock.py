"""Stored timestamps are UTC; what a human reads is local time."""

from __future__ import annotations

import os
import time
from datetime import datetime

import pytest

from dsh_cli.core.clock import local_time, utc_stamp


@pytest.fixture
def tokyo():
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    if before is None:
        os.environ.pop("TZ")
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_a_stamp_is_utc_with_z():
    stamp = utc_stamp()
    assert stamp.endswith("Z")
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert moment.utcoffset() is not None and moment.utcoffset().total_seconds() == 0
    assert utc_stamp(timespec="seconds").count(".") == 0


def test_a_human_reads_local_time(tokyo):
    assert local_time("2026-12-03T16:54:43Z") == "2026-12-04 01:54"
    assert local_time("2026-12-03T16:54:43.5Z", "%H:%M") == "01:54"


def test_an_older_naive_stamp_is_shown_as_written(tokyo):
    assert local_time("2026-12-03T16:54:43") == "2026-12-03 16:54"


def test_none_or_unreadable():
    assert local_time("") == "?"
    assert local_time("yesterday") == "yesterday"
