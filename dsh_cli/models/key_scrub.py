"""The API key kept out of everything a server sends back: error text and model content.

Matching ignores case: a server (or a model) that echoes the key upper-cased still
gives it away. Model content arrives in pieces, and the key may be split across two of
them, so ``KeyFilter`` holds back a tail that could be the start of the key until the
next piece says whether it was. Keys shorter than ``MIN_CONTENT_KEY`` characters are toy
keys (tests, local servers): content is left alone, as scrubbing them would eat words.
"""

from __future__ import annotations

import re

__all__ = ["MASK", "MIN_CONTENT_KEY", "KeyFilter", "mask_key", "scrub_key"]

MASK = "[key]"
MIN_CONTENT_KEY = 8


def scrub_key(text: str, key: str) -> str:
    """Remove the key, and any word holding a long piece of it (masked echoes)."""
    if not key:
        return text
    if len(key) < MIN_CONTENT_KEY:  # a toy key: only as a whole word, or every "k" would go
        return re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", MASK, text, flags=re.IGNORECASE)
    text = re.sub(re.escape(key), MASK, text, flags=re.IGNORECASE)
    if len(key) < 12:
        return text
    head, tail = key[:8].lower(), key[-8:].lower()
    return " ".join(MASK if head in word.lower() or tail in word.lower() else word
                    for word in text.split(" "))


def mask_key(text: str, key: str) -> str:
    """Every occurrence of the key, in any case, masked; nothing else touched (JSON stays
    JSON). A toy key is left alone, as in content."""
    if len(key) < MIN_CONTENT_KEY:
        return text
    return re.sub(re.escape(key), MASK, text, flags=re.IGNORECASE)


class KeyFilter:
    """Streamed text with the key masked, even when it is split across pieces."""

    __slots__ = ("_held", "_key", "_pattern")

    def __init__(self, key: str) -> None:
        self._key = key.lower() if len(key) >= MIN_CONTENT_KEY else ""
        self._pattern = re.compile(re.escape(key), re.IGNORECASE) if self._key else None
        self._held = ""

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def feed(self, piece: str) -> str:
        """The part of the text so far that is safe to pass on."""
        if self._pattern is None:
            return piece
        text = self._held + piece
        if self._key[0] not in text.lower() and not self._held:
            return text  # the common case: nothing here can start the key
        text = self._pattern.sub(MASK, text)
        keep = self._possible_start(text)
        self._held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep] if keep else text

    def flush(self) -> str:
        """What was held back, at the end of the stream (it was not the key)."""
        held, self._held = self._held, ""
        return held

    def _possible_start(self, text: str) -> int:
        """How many trailing characters of ``text`` could begin the key."""
        tail = text[-(len(self._key) - 1):]
        first = self._key[0]
        for start, char in enumerate(tail):  # longest candidate first
            if char.lower() == first and self._key.startswith(tail[start:].lower()):
                return len(tail) - start
        return 0
