"""Issue 26 as a newcomer met the terminal UI: hints that keep the keys that answer, a
heading per form. Each test drives a real ``TerminalProvider`` over pipe input at 100, 60
and 40 columns and reads the frame the application draws."""

from __future__ import annotations

import pytest
from harness.terminal_session import ask, assert_fits, item, key_line

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


TARGET = {"type": "object", "required": ["env"], "properties": {
    "env": {"type": "string", "title": "Environment", "enum": ["staging", "production"]}}}
APPROVE = {"type": "object", "required": ["ok"], "properties": {
    "ok": {"type": "boolean", "title": "Approve"}}}


def two_forms(columns: int, body):
    """``body(session)`` with one batch of an MCP server's two forms, asked by the real
    ``Elicitor`` on a ``columns`` x 20 terminal; the server's results."""
    import asyncio
    import io

    from harness.terminal_session import Session
    from mcp_types import ElicitRequestFormParams
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    from dsh_cli.interaction import UserInteraction
    from dsh_cli.mcp_client.forms.asking import Elicitor
    from dsh_cli.providers.terminal import TerminalProvider

    async def main():
        output = Vt100_Output(io.StringIO(), lambda: Size(rows=20, columns=columns),
                              term="xterm")
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
            ui = UserInteraction()
            provider = TerminalProvider()
            ui.register_provider(provider)
            requests = {
                "target": ElicitRequestFormParams(message="Where should it go?",
                                                  requested_schema=TARGET),
                "approve": ElicitRequestFormParams(message="Approve the deploy?",
                                                   requested_schema=APPROVE)}
            task = asyncio.ensure_future(Elicitor("deploy", ui).answer(requests))
            for _ in range(300):
                if provider.screen is not None and provider.screen.app.is_running:
                    break
                await asyncio.sleep(0.01)
            seen = await asyncio.wait_for(body(Session(pipe, provider, task)), 10)
            return seen, await asyncio.wait_for(task, 5)

    return asyncio.run(main())


@pytest.mark.parametrize("columns", WIDTHS)
def test_two_forms_in_one_batch_each_head_their_questions_with_their_own_message(columns):
    async def body(session):
        first = session.frame()
        await session.keys("1")  # staging: on to the second form's question
        second = session.frame()
        await session.keys("1")  # approve: yes, then the review
        review = session.frame()
        await session.keys("\r")
        return first, second, review

    (first, second, review), results = two_forms(columns, body)
    for frame in (first, second, review):
        assert_fits(frame, (columns, 20))
    heading = [line for line in first if line.startswith(" ── ")]
    assert heading and "".join(heading).startswith(" ── deploy asks: Where should it go?")
    assert "Approve the deploy?" not in "".join(first)
    assert "".join(line for line in second if line.startswith(" ── ")).startswith(
        " ── deploy asks: Approve the deploy?")
    assert "Where should it go?" not in "".join(second)
    assert results["target"].content == {"env": "staging"}
    assert results["approve"].content == {"ok": True}
