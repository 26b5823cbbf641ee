"""Text as it enters dsh: one rule for lone surrogates, applied at every boundary.

JSON may spell a lone UTF-16 surrogate (``"\\ud800"``), and Python decodes it into a
``str`` that cannot be encoded as UTF-8: printing or storing it fails far from where it
came in. So every boundary (model stream, answers file, relay, web) passes incoming text
through ``scrub_surrogates``, which replaces each lone surrogate with U+FFFD, as a UTF-8
decoder does with a bad byte. A valid pair spelt as two escapes is already one character.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "scrub_surrogates", "scrub_surrogates_in"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same object when none)."""
    if _SURROGATE.search(text) is None:  # the common case: one scan, no copy
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def scrub_surrogates_in(value: Any) -> Any:
    """``scrub_surrogates`` through a parsed JSON value: strings, keys, lists, objects."""
    if isinstance(value, str):
        return scrub_surrogates(value)
    if isinstance(value, list):
        return [scrub_surrogates_in(item) for item in value]
    if isinstance(value, dict):
        return {scrub_surrogates_in(key): scrub_surrogates_in(item)
                for key, item in value.items()}
    return value
