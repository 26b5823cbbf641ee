"""Styled text wrapped by display width: wide CJK and emoji take two cells, never split."""

from __future__ import annotations

import functools
import re

from wcwidth import wcwidth

from dsh_cli.interaction import display_width

__all__ = ["CURSOR", "RUN", "Fragment", "Line", "cell_width", "fit", "wrap"]

Fragment = tuple[str, str]
Line = list[Fragment]

CURSOR: Fragment = ("[SetCursorPosition]", "")  # prompt-toolkit puts the cursor here
# a style word prompt-toolkit ignores: the fragments a line ends with, so marked, are each
# drawn as one cell (``runs.RunWindow``), compared and written at once, not a cell a character
RUN = "[run]"
_TOKENS = re.compile(r"\s+|\S+")


def cell_width(text: str) -> int:
    """Cells the text takes on a terminal (sanitised text: no controls)."""
    if text.isascii():  # sanitised ASCII is one cell a character: the common case, fast
        return len(text)
    return _wide_width(text)


@functools.lru_cache(maxsize=2048)
def _wide_width(text: str) -> int:
    """``display_width``, kept: a frame measures the same marks and rows again (›, │, ·)."""
    return display_width(text)


def _char_width(char: str) -> int:
    return max(wcwidth(char), 0)


def wrap(fragments: list[Fragment], width: int, *, indent: int = 0) -> list[Line]:
    """Greedy word wrap to ``width`` cells; continuation lines start ``indent`` spaces in.

    Words longer than a line are broken between characters, so nothing is ever cut off.
    Zero-length fragments (the cursor marker) are kept where they stand.
    """
    width = max(width, indent + 2)
    lines: list[Line] = [[]]
    column = 0

    def new_line() -> None:
        nonlocal column
        lines.append([("", " " * indent)] if indent else [])
        column = indent

    for style, text in fragments:
        if not text:
            lines[-1].append((style, text))
            continue
        size = cell_width(text)
        fits = column + size <= width and "\t" not in text and "\n" not in text
        if fits and (column > indent or len(lines) == 1 or not text[0].isspace()):
            lines[-1].append((style, text))  # fits whole: one fragment, not one per word
            column += size
            continue
        for token in _TOKENS.findall(text.replace("\t", "    ")):
            size = cell_width(token)
            if token.isspace():
                if column + size > width:
                    new_line()
                elif column > indent or len(lines) == 1:
                    lines[-1].append((style, token))
                    column += size
                continue
            if column + size > width and size <= width - indent and column > indent:
                new_line()
            if column + size <= width:
                lines[-1].append((style, token))
                column += size
                continue
            for char in token:  # a word wider than the line: break it between characters
                char_size = _char_width(char)
                if column + char_size > width:
                    new_line()
                lines[-1].append((style, char))
                column += char_size
    return lines


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with an ellipsis when it does not fit (one line)."""
    if cell_width(text) <= width:
        return text
    out, used = [], 0
    for char in text:
        size = _char_width(char)
        if used + size > width - 1:
            break
        out.append(char)
        used += size
    return "".join(out) + "…"
