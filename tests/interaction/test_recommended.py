"""The recommended-option convention: a label suffix, shown as a badge, returned unchanged."""

from __future__ import annotations

import pytest

from dsh_cli.interaction import display_label, is_recommended


@pytest.mark.parametrize("label", [
    "PostgreSQL (Recommended)",
    "PostgreSQL (recommended)",
    "PostgreSQL (RECOMMENDED)",
    "PostgreSQL (ReCoMmEnDeD)",
    "PostgreSQL（Recommended）",
    "PostgreSQL （Recommended）",
    "PostgreSQL (推荐)",
    "PostgreSQL(推荐)",
])
def test_recommended_suffixes(label):
    assert is_recommended(label)
    assert display_label(label) == "PostgreSQL"


@pytest.mark.parametrize("label", [
    "PostgreSQL",
    "(Recommended) PostgreSQL",
    "Recommended",
    "PostgreSQL Recommended",
    "PostgreSQL (Recommended) or not",
    "PostgreSQL [Recommended]",
])
def test_labels_without_the_suffix(label):
    assert not is_recommended(label)
    assert display_label(label) == label


def test_a_label_that_is_only_the_suffix_keeps_its_text_for_display():
    assert display_label("(Recommended)").strip() != ""
