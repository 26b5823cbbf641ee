"""The recommended-option convention: a label ending in ``(Recommended)``."""

from __future__ import annotations

import re

__all__ = ["display_label", "is_recommended"]

_SUFFIX = re.compile(
    r"\s*(?:[(（]\s*recommended\s*[)）]|[(（]\s*推荐\s*[)）])\s*$", re.IGNORECASE
)


def is_recommended(label: str) -> bool:
    """Whether the label carries the recommended suffix."""
    return bool(_SUFFIX.search(label))


def display_label(label: str) -> str:
    """The label without its recommended suffix, for display only (never returned)."""
    stripped = _SUFFIX.sub("", label)
    return stripped if stripped.strip() else label
