"""Issue 26 as a newcomer met the terminal UI: hints that keep the keys that answer, a
heading per form. Each test drives a real ``TerminalProvider`` over pipe input at 100, 60
and 40 columns and reads the frame the application draws."""

from __future__ import annotations

import pytest
from test_terminal_forgiving import ask, assert_fits, item, key_line

WIDTHS = [100, 60, 40]


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_narrow_multi_select_keeps_its_toggle_key_before_the_filter(columns):
    size = (columns, 20)

    @ask(size, item("f", "Auth", "Billing", "Admin UI", multi=True), item("name"))
    async def frame(session):
        frame = session.frame()
        await session.keys(" ", "\r")  # the key the line teaches toggles, enter confirms
        assert session.state.drafts[0].answer.selected == ["Auth"]
        return frame

    assert_fits(frame, size)
    keys = key_line(frame)
    assert "space toggle" in keys and "enter" in keys and "esc" in keys, keys
    if "/ filter" in keys:  # filtering gives way first, never the toggle
        assert columns == 100, keys


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_narrow_single_select_drops_the_filter_before_the_number_keys(columns):
    size = (columns, 20)

    @ask(size, item("db", "PostgreSQL", "SQLite"), item("name"))
    async def frame(session):
        return session.frame()

    keys = key_line(frame)
    assert_fits(frame, size)
    if columns >= 60:
        assert "1-9 pick" in keys, keys
    assert ("/ filter" in keys) == (columns == 100), keys
