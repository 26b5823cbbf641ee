"""Property: sanitised text carries no terminal control, keeps what is printable, is stable."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from dsh_cli.interaction import display_width, sanitize, sanitize_line

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
ZERO_WIDTH = set("\u200b\u200c\u2060\u2061\u2062\u2063\u2064\ufeff\u180e")
ZWJ = "\u200d"
TAGS = {"\U000e0001", "\U000e0020", "\U000e0041", "\U000e0069", "\U000e007e", "\U000e007f"}


def _is_pictograph(char: str) -> bool:
    return "\u2600" <= char <= "\u27bf" or "\U0001f000" <= char <= "\U0001faff"


def _forbidden(char: str) -> bool:
    code = ord(char)
    return ((code < 0x20 and char not in "\n\t") or 0x7f <= code <= 0x9f
            or char in BIDI or char in ZERO_WIDTH or 0xE0000 <= code <= 0xE007F)


def assert_display_safe(text: str) -> None:
    assert "\x1b" not in text
    for index, char in enumerate(text):
        assert not _forbidden(char), f"U+{ord(char):04X} at {index} in {text!r}"
        if char == ZWJ:  # only inside an emoji sequence, joining two pictographs
            before = text[index - 1] if index else ""
            after = text[index + 1] if index + 1 < len(text) else ""
            assert before and after and _is_pictograph(after), text
            assert _is_pictograph(before) or before == "\ufe0f", text


# Anything at all, weighted towards the characters and sequences terminals act on.
TERMINAL_CHARS = st.sampled_from(
    ["\x1b", "[", "]", "\x07", "\x9b", "\x9d", "\x90", "\x9c", "\\", "P", "m", ";", "2",
     "\r", "\n", "\t", "\x00", "\x7f", "\x85", ZWJ, "\ufe0f", "😀", "👩", "名", "a", " ",
     *sorted(BIDI), *sorted(ZERO_WIDTH), *sorted(TAGS), "\U0001f3f4"]
)
ANY_TEXT = st.one_of(
    st.text(max_size=40),
    st.lists(st.one_of(TERMINAL_CHARS, st.characters()), max_size=40).map("".join),
)

# Whole, well-formed control sequences: removed without touching their neighbours.
SEQUENCES = st.sampled_from([
    "\x1b[31m", "\x1b[0m", "\x1b[2J", "\x1b[?25l", "\x1b[10;20H", "\x1b[38;5;196m",
    "\x1b]52;c;ZWNobyBwd25lZA==\x07",  # OSC 52: write to the clipboard
    "\x1b]0;evil title\x1b\\", "\x1b]8;;https://evil.example\x07",  # title, hyperlink
    "\x1bP+q544e\x1b\\", "\x1b_apc\x1b\\", "\x1b^pm\x1b\\", "\x1bc", "\x1b7", "\x1b(B",
    "\x9b31m", "\x9d52;c;eA==\x9c", "\x90dcs\x9c",
    "\x00", "\x07", "\x08", "\r", "\x7f", "\x85", "\u202e", "\u2066", "\u2069",
    "\u200e", "\u200b", "\ufeff", "\u2060", "\u061c", "\U000e0041\U000e0042", "\U000e007f",
])
# Printable text: letters, digits, punctuation, spaces, CJK, emoji, newlines and tabs.
PRINTABLE = st.text(
    alphabet=st.one_of(
        st.characters(categories=["L", "N", "P", "S", "Zs"]).filter(
            lambda c: not _forbidden(c) and c != ZWJ and unicodedata.category(c) != "Cf"),
        st.sampled_from(["名", "前", "😀", "👍", "\n", "\t", " "]),
    ),
    max_size=30,
)


@st.composite
def printable_with_sequences(draw):
    """(printable text, the same text with control sequences spliced in between)."""
    pieces = draw(st.lists(PRINTABLE, min_size=1, max_size=5))
    spliced = []
    for piece in pieces:
        spliced.extend(draw(st.lists(SEQUENCES, max_size=2)))
        spliced.append(piece)
    spliced.extend(draw(st.lists(SEQUENCES, max_size=2)))
    return "".join(pieces), "".join(spliced)


@given(ANY_TEXT)
def test_no_control_survives_sanitize(text):
    assert_display_safe(sanitize(text))


@given(ANY_TEXT)
def test_sanitize_line_is_one_safe_line(text):
    line = sanitize_line(text)
    assert_display_safe(line)
    assert "\n" not in line and "\t" not in line


@given(ANY_TEXT)
def test_sanitize_is_idempotent(text):
    once = sanitize(text)
    assert sanitize(once) == once
    assert sanitize_line(sanitize_line(text)) == sanitize_line(text)


@given(PRINTABLE)
def test_printable_text_is_kept_exactly(text):
    assert sanitize(text) == text


@given(printable_with_sequences())
def test_spliced_sequences_go_and_the_text_and_its_width_stay(case):
    printable, spliced = case
    cleaned = sanitize(spliced)
    assert cleaned == printable
    assert display_width(cleaned) == display_width(printable)


@given(ANY_TEXT)
def test_display_width_of_sanitised_text_is_never_negative(text):
    assert display_width(sanitize_line(text)) >= 0


@given(ANY_TEXT)
def test_escape_invisible_hides_nothing_and_drops_nothing(text):
    from dsh_cli.core.sanitize import escape_invisible

    shown = escape_invisible(text)
    assert_display_safe(shown)
    assert "\n" not in shown and "\t" not in shown and ZWJ not in shown
    assert all(unicodedata.category(char)[0] not in "CZ" or char == " " for char in shown)
    # every character that shows as itself stays, in order; the rest became escapes
    kept = iter(shown)
    assert all(char in kept for char in text if escape_invisible(char) == char)
