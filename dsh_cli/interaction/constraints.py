"""Typed free text: how an answer typed into a question is checked and converted.

A question may carry a ``TextRule`` (elicitation forms ask for numbers, dates, e-mail
addresses, lengths and patterns). The rule is plain data, so every UI, the relay and the
answers file are checked by the same code: ``problem(text)`` says what is wrong in words a
human can act on (the UI asks again with that reason), ``value(text)`` is the typed value.
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from dsh_cli.core.limits import PATTERN_CHARACTERS as MAX_PATTERN

__all__ = ["MAX_PATTERN", "TextRule", "compile_pattern"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
PATTERN_SECONDS = 0.25  # a check of one answer against a server's pattern, at the most


class TextRule(BaseModel):
    """What typed text must be: a string (lengths, pattern, format) or a number (range)."""

    # built with the first request that holds it (``dsh ask`` builds no rule of its own)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["string", "number", "integer"] = "string"
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    minimum: float | None = None
    maximum: float | None = None

    def problem(self, text: str) -> str | None:
        """Why ``text`` does not fit, or None."""
        if self.kind in ("number", "integer"):
            return self._number_problem(text)
        length = len(text)
        if self.min_length is not None and length < self.min_length:
            return f"at least {self.min_length} characters"
        if self.max_length is not None and length > self.max_length:
            return f"at most {self.max_length} characters"
        if self.pattern is not None:
            problem = _pattern_problem(self.pattern, text)
            if problem is not None:
                return problem
        return _format_problem(self.format, text) if self.format else None

    def value(self, text: str) -> Any:
        """The typed value of text that fits (a number for number rules)."""
        if self.kind == "integer":
            return int(float(text.strip()))
        if self.kind == "number":
            number = float(text.strip())
            return int(number) if number.is_integer() and "." not in text else number
        return text

    def describe(self) -> str:
        """The rule in a few words, for a UI's hint line."""
        if self.kind in ("number", "integer"):
            what = "a whole number" if self.kind == "integer" else "a number"
            if self.minimum is not None and self.maximum is not None:
                return f"{what} from {_plain(self.minimum)} to {_plain(self.maximum)}"
            if self.minimum is not None:
                return f"{what} ≥ {_plain(self.minimum)}"
            if self.maximum is not None:
                return f"{what} ≤ {_plain(self.maximum)}"
            return what
        parts = []
        if self.format:
            parts.append({"email": "an e-mail address", "uri": "a URI",
                          "date": "a date (YYYY-MM-DD)",
                          "date-time": "a date and time (ISO 8601)"}[self.format])
        if self.min_length is not None or self.max_length is not None:
            low, high = self.min_length or 0, self.max_length
            parts.append(f"{low}-{high} characters" if high is not None
                         else f"at least {low} characters")
        if self.pattern is not None:
            parts.append(f"matching {self.pattern}")
        return ", ".join(parts) or "text"

    def _number_problem(self, text: str) -> str | None:
        raw = text.strip()
        try:
            number = float(raw)
        except ValueError:
            return "a whole number" if self.kind == "integer" else "a number"
        if not math.isfinite(number):
            return "a finite number"
        if self.kind == "integer" and not number.is_integer():
            return "a whole number"
        if self.minimum is not None and number < self.minimum:
            return f"at least {_plain(self.minimum)}"
        if self.maximum is not None and number > self.maximum:
            return f"at most {_plain(self.maximum)}"
        return None


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def compile_pattern(pattern: str) -> Any:
    """A JSON-schema ``pattern`` compiled, or ``ValueError`` saying why it cannot be used
    (over ``MAX_PATTERN`` characters, does not compile, nested past the parser's depth)."""
    import regex

    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"a pattern is at most {MAX_PATTERN} characters ({len(pattern)})")
    try:
        return regex.compile(pattern)
    except (regex.error, RecursionError, OverflowError) as error:
        raise ValueError(f"not a valid regular expression ({error})") from None


@functools.lru_cache(maxsize=64)
def _pattern_problem(pattern: str, text: str) -> str | None:
    """Why ``text`` fails a JSON-schema ``pattern`` (a search, not a full match), or None.

    A server's pattern may backtrack for hours on some text (``(a|aa)+$``) and the check
    runs on the event loop: the ``regex`` library's timeout bounds it, and text it cannot
    settle in time is asked again. The verdict is kept, so the provider, the seam and the
    form's content, checking one answer in turn, agree (a second check might time out where
    the first did not). A broken or over-long pattern never matches.
    """
    try:
        if compile_pattern(pattern).search(text, timeout=PATTERN_SECONDS) is not None:
            return None
    except TimeoutError:
        return "a shorter answer (this one could not be checked against the pattern in time)"
    except (ValueError, RecursionError):
        pass
    return f"text matching the pattern {pattern}"


def _format_problem(kind: str, text: str) -> str | None:
    if kind == "email":
        return None if _EMAIL.match(text) else "an e-mail address like name@example.com"
    if kind == "uri":
        return None if _URI.match(text) else "a URI like https://example.com/path"
    try:
        if kind == "date":
            datetime.date.fromisoformat(text)
        else:
            datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return "a date like 2026-12-01" if kind == "date" else "a date and time like " \
            "2026-12-01T09:30:00Z"
    return None
