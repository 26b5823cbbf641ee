"""How a ``dsh:`` line is written: the one place its prefix is added.

Every line dsh says to a human on stderr (or a chat's transcript) starts ``dsh: ``; a
failure is ``dsh: CODE: message`` (``errors.format_line``), a warning ``dsh: warning: …``.
The writer at the edge adds the prefix through these functions, so a text is never
prefixed twice and a test can check that no other module types it.
"""

from __future__ import annotations

from typing import TextIO

PREFIX = "dsh: "
NARROWEST = 20  # below this many columns wrapping helps no one: the terminal wraps it


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


def for_terminal(text: str, stream: TextIO, *, indent: int = 2) -> str:
    """``text`` wrapped at spaces to the width of ``stream`` when it is a terminal, each
    row after the first ``indent`` spaces in; elsewhere (a log, a pipe) one line a message,
    as a script greps it. A word wider than the terminal is kept whole."""
    import os

    try:
        if not stream.isatty():
            return text
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):  # no fileno: a test's StringIO, a closed fd
        return text
    if width < NARROWEST:
        return text
    import textwrap

    rows: list[str] = []
    for line in text.split("\n"):
        rows.extend(textwrap.wrap(line, width - 1, subsequent_indent=" " * indent,
                                  break_long_words=False, break_on_hyphens=False,
                                  drop_whitespace=True) or [""])
    return "\n".join(rows)
