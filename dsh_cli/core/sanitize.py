"""Display safety: model-written text must never drive the terminal.

``sanitize`` removes ANSI/VT escape and control sequences, C0 and C1 controls other than
newline and tab, bidirectional overrides, isolates and marks, zero-width characters and
Unicode tag characters (U+E0000-U+E007F, invisible letters that can smuggle a second text).
Wide characters stay; ``display_width`` measures them in terminal cells.

``escape_invisible`` is for what a human grants (a permission prompt's arguments): nothing
is removed, every character that would not show as itself becomes a visible escape.

``one_line`` is a peer's text in a slot of bounded length (a name, a reason, a summary):
sanitised, on one line, white space collapsed, cut with ``…``.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["display_width", "escape_invisible", "json_escaped", "one_line", "sanitize",
           "sanitize_line"]

_ESCAPE_SEQUENCES = (
    r"""
    \x1b\[[0-?]*[\x20-/]*[@-~]?              # CSI ... final byte (possibly cut off)
    | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?     # OSC ... BEL or ST (or end of text)
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?          # DCS, SOS, PM, APC strings
    | \x1b[\x20-/]*[0-~]?                    # two-byte and nF escapes
    | [\x90\x98\x9e\x9f][^\x9c\x1b]*(?:\x9c|\x1b\\)?  # 8-bit DCS, SOS, PM, APC
    | \x9b[0-?]*[\x20-/]*[@-~]?              # 8-bit CSI
    | \x9d[^\x07\x9c]*(?:\x07|\x9c)?         # 8-bit OSC
    """
)
_UNSAFE_CHARS = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but tab and newline), DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, overrides, isolates
    "\u200b\u200c\u2060-\u2064\ufeff\u180e"  # zero-width characters (ZWJ: below)
    "\U000e0000-\U000e007f"  # tag characters: a flag's tags go too (🏴 stays, plain)
    "]"
)


# A zero-width joiner survives only inside an emoji sequence (👨‍👩‍👧), where it is part of
# one visible glyph; anywhere else it is an invisible character and goes.
_PICTOGRAPH = "\u2600-\u27bf\U0001f000-\U0001faff"
_STRAY_JOINER = f"(?<![{_PICTOGRAPH}\ufe0f])\u200d|\u200d(?![{_PICTOGRAPH}])"


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Compiled on first use: a run that prints no model text never pays for them."""
    return (re.compile(_ESCAPE_SEQUENCES, re.VERBOSE), re.compile(_UNSAFE_CHARS),
            re.compile(_STRAY_JOINER))


def sanitize(text: str) -> str:
    """Text safe to print: escapes and controls removed, newlines and tabs kept."""
    if text.isascii() and text.isprintable():  # space to tilde: nothing to remove, no regex
        return text
    escapes, unsafe, joiners = _patterns()
    text = escapes.sub("", text.replace("\r\n", "\n"))
    return joiners.sub("", unsafe.sub("", text))


def sanitize_line(text: str) -> str:
    """``sanitize`` for a one-line slot: newlines and tabs become spaces."""
    return re.sub(r"[\n\t\u2028\u2029]", " ", sanitize(text))


def one_line(text: str, limit: int) -> str:
    """One safe line of at most ``limit`` characters, white space collapsed, ``…`` where cut."""
    # cut before sanitising: a megabyte of a peer's text is not scanned whole to keep a line;
    # the margin leaves room for what sanitising and the collapse remove
    line = " ".join(sanitize_line(text[:limit * 8]).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


# drawn as blank or as nothing, yet letters: the Hangul fillers
_INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
# controls, format characters (bidi, zero-width, tags, soft hyphen), separators, surrogates,
# private use and unassigned code points: none of them shows as itself
_INVISIBLE_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_invisible(text: str) -> str:
    """``text`` on one line with every character that would not show as itself escaped.

    Newline, carriage return and tab become ``\\n``, ``\\r``, ``\\t``; any other control,
    format character (bidi, zero-width, tag), separator, space other than U+0020 or
    unassigned code point becomes ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``. Nothing is removed:
    what a human approves is every character of it.
    """
    if text.isascii() and text.isprintable():
        return text
    out = []
    for char in text:
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif char == " " or (char not in _INVISIBLE_LETTERS and _shows(char)):
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "".join(out)


def json_escaped(text: str) -> str:
    """JSON text with every character that would not show as itself (C1 controls, DEL, bidi,
    zero-width and tag characters, separators) as a ``\\uXXXX`` escape: the same value for a
    parser, nothing that drives a terminal or a pager for a human."""
    if text.isascii() and "\x7f" not in text:
        return text  # json.dumps escapes C0 itself
    return re.sub(r"[^\x20-\x7e]", _json_escape, text)


def _json_escape(found: re.Match[str]) -> str:
    char = found.group()
    if char not in _INVISIBLE_LETTERS and _shows(char):
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON escapes a code point past the BMP as its surrogate pair
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def _shows(char: str) -> bool:
    category = unicodedata.category(char)
    return category not in _INVISIBLE_CATEGORIES and category != "Zs"


def display_width(text: str) -> int:
    """Terminal cells the (sanitised) text takes; wide CJK and emoji count two."""
    from wcwidth import wcswidth, wcwidth

    width = wcswidth(text)
    if width >= 0:
        return width
    return sum(max(wcwidth(char), 0) for char in text)
