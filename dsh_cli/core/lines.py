"""How a ``dsh:`` line is written: the one place its prefix is added.

Every line dsh says to a human on stderr (or a chat's transcript) starts ``dsh: ``; a
failure is ``dsh: CODE: message`` (``errors.format_line``), a warning ``dsh: warning: …``.
The writer at the edge adds the prefix through these functions, so a text is never
prefixed twice and a test can check that no other module types it.
"""

from __future__ import annotations

PREFIX = "dsh: "


def notice(text: str) -> str:
    """``text`` as a dsh line: ``dsh: text``."""
    return PREFIX + text


def warning(text: str) -> str:
    """``text`` as a dsh warning line: ``dsh: warning: text``."""
    return notice(f"warning: {text}")


def debug(text: str) -> str:
    """``text`` as a dsh debug line: ``dsh: debug: text``."""
    return notice(f"debug: {text}")


def coded(code: str, message: str) -> str:
    """A failure's line: ``dsh: CODE: message``."""
    return notice(f"{code}: {message}")
