"""The suite's own layout: pytest imports test modules by their base name (no packages)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name():
    """Two ``test_x.py`` in different folders collide in a whole run ("import file
    mismatch"), though each passes alone."""
    names = Counter(path.name for path in TESTS.rglob("test_*.py")
                    if "node_modules" not in path.parts)
    assert [name for name, count in names.items() if count > 1] == []
