"""What a desk says of a batch in one line: the inbox's rows and the notifications share it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_cli.core.sanitize import one_line

__all__ = ["first_question"]


def first_question(event: Mapping[str, Any], limit: int) -> str:
    """The batch's header and first question, ``(+N more)`` for the rest, in ``limit``."""
    questions = event.get("questions")
    first = questions[0] if isinstance(questions, list) and questions else {}
    first = first if isinstance(first, Mapping) else {}
    header, question = str(first.get("header") or ""), str(first.get("question") or "")
    more = f" (+{len(questions) - 1} more)" if isinstance(questions, list) \
        and len(questions) > 1 else ""
    body = f"{one_line(header, 40)}: {question}" if header else question
    return one_line(body or "?", limit - len(more)) + more
