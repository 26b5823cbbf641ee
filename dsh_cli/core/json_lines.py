"""JSON lines: one value as one line of compact JSON, the shape every peer of dsh reads.

A relay's events, a desk's frames, ACP's messages and a notify command's input are each
one line a value; ``json_line`` is the one way dsh writes such a line. ``ascii_only``
escapes every non-ASCII character (no byte of a line can be split or misread by a reader
that is not UTF-8 clean); otherwise the line is UTF-8 text, with a lone surrogate (which no
UTF-8 encoder takes) replaced by U+FFFD, as ``core.text`` does where text enters dsh.
"""

from __future__ import annotations

import json

from dsh_cli.core.text import scrub_surrogates

__all__ = ["json_line"]


def json_line(value: object, *, ascii_only: bool = False) -> str:
    """``value`` as one line of compact JSON ending in ``\\n``, safe to encode as UTF-8."""
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
    return (text if ascii_only else scrub_surrogates(text)) + "\n"
