"""Display safety: model-written text never drives the terminal (``questions.md``)."""

from __future__ import annotations

import pytest

from dsh_cli.interaction import display_width, sanitize, sanitize_line

ESCAPES = {
    "csi-colour": ("\x1b[31mred\x1b[0m", "red"),
    "csi-clear-screen": ("\x1b[2J\x1b[Hhome", "home"),
    "csi-private-mode": ("\x1b[?1049hscreen\x1b[?25l", "screen"),
    "osc-title-bel": ("\x1b]0;pwned\x07text", "text"),
    "osc-hyperlink-st": ("\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "link"),
    "osc-clipboard": ("\x1b]52;c;cm0gLXJmIH4=\x07safe", "safe"),
    "dcs": ("\x1bP1$r0m\x1b\\after", "after"),
    "apc": ("\x1b_hidden\x1b\\shown", "shown"),
    "two-byte-escape": ("\x1bcreset", "reset"),
    "csi-8-bit": ("\x9b31mred\x9b0m", "red"),
    "osc-8-bit": ("\x9d0;title\x9cvisible", "visible"),
    "c1-controls": ("a\x84b\x8dc\x9cd", "abcd"),
    "c0-controls": ("a\x00b\x07c\x08d\x0be\x0cf\x7fg", "abcdefg"),
    "carriage-return": ("safe\rFAKE", "safeFAKE"),
    "lone-escape-at-end": ("end\x1b", "end"),
    "csi-cut-off-at-end": ("end\x1b[31", "end"),
    "next-line-c1": ("a\x85b", "ab"),
    "save-restore-cursor": ("\x1b7over\x1b8", "over"),
    "charset-switch": ("\x1b(0line\x1b(B", "line"),
    "sos": ("\x1bXhidden\x1b\\shown", "shown"),
    "pm": ("\x1b^hidden\x1b\\shown", "shown"),
    "osc-8-bit-bel": ("\x9d2;title\x07shown", "shown"),
}


@pytest.mark.parametrize(("text", "expected"), ESCAPES.values(), ids=ESCAPES.keys())
def test_escape_and_control_sequences_are_removed(text, expected):
    assert sanitize(text) == expected


@pytest.mark.parametrize("char", [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]],
                         ids=lambda c: f"U+{ord(c):04X}")
def test_bidi_overrides_and_isolates_are_removed(char):
    assert sanitize(f"abc{char}def") == "abcdef"


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"],
                         ids=lambda c: f"U+{ord(c):04X}")
def test_zero_width_characters_are_removed(char):
    assert sanitize(f"ab{char}cd") == "abcd"


def test_newline_and_tab_are_kept():
    assert sanitize("line 1\n\tline 2") == "line 1\n\tline 2"


def test_crlf_becomes_a_newline():
    assert sanitize("one\r\ntwo") == "one\ntwo"


def test_wide_characters_are_kept():
    text = "数据库 データ 데이터 🙂🚀 café"
    assert sanitize(text) == text


def test_sanitize_line_gives_one_line_without_escapes():
    line = sanitize_line("title\x1b[2J\nsecond\tthird\u2028fourth")
    assert "\n" not in line and "\x1b" not in line and "\u2028" not in line
    assert line.split() == ["title", "second", "third", "fourth"]


@pytest.mark.parametrize(("text", "width"), [
    ("abc", 3),
    ("数据库", 6),
    ("🙂", 2),
    ("a中b", 4),
    ("", 0),
])
def test_display_width_counts_wide_characters_as_two(text, width):
    assert display_width(text) == width


def test_eight_bit_string_controls_lose_their_payload():
    assert sanitize("\x90qpayload\x9cok") == "ok"
    assert sanitize("\x9dtitle\x07rest") == "rest"


def test_a_joiner_survives_only_inside_an_emoji_sequence():
    family = "👨\u200d👩\u200d👧"
    assert sanitize(family) == family and display_width(sanitize(family)) == 2
    assert sanitize("a\u200db") == "ab"
    assert sanitize("\u200d👩") == "👩"
