"""What a desk says of a batch in one line: the inbox's rows and the notifications share it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_cli.core.sanitize import sanitize_line

__all__ = ["cut", "first_question"]


def cut(text: str, limit: int) -> str:
    """One safe line of at most ``limit`` characters, ``…`` where it was cut."""
    # cut before sanitising: a megabyte of question is not scanned whole to keep a line
    line = " ".join(sanitize_line(text[:limit * 8]).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def first_question(event: Mapping[str, Any], limit: int) -> str:
    """The batch's header and first question, ``(+N more)`` for the rest, in ``limit``."""
    questions = event.get("questions")
    first = questions[0] if isinstance(questions, list) and questions else {}
    first = first if isinstance(first, Mapping) else {}
    header, question = str(first.get("header") or ""), str(first.get("question") or "")
    more = f" (+{len(questions) - 1} more)" if isinstance(questions, list) \
        and len(questions) > 1 else ""
    body = f"{cut(header, 40)}: {question}" if header else question
    return cut(body or "?", limit - len(more)) + more
