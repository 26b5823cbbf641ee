"""docs/robustness.md names only tests that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_test_the_table_names_exists():
    text = (ROOT / "docs" / "robustness.md").read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", text)
    assert len(named) > 40
    missing = [f"{path}::{name}" for path, name in named
               if f"def {name}(" not in (ROOT / path).read_text(encoding="utf-8")]
    assert missing == []
