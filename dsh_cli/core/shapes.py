"""Shape errors from pydantic in dsh's words: ``path: message`` lines anyone can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["format_validation_error"]


def format_validation_error(error: ValidationError, root: str = "") -> str:
    """A pydantic error as ``path: message`` lines a model or a human can act on."""
    lines = []
    for detail in error.errors():
        path = root
        for part in detail["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        message = "field required" if detail["type"] == "missing" else detail["msg"]
        lines.append(f"{path or 'value'}: {message}")
    return "; ".join(lines)
