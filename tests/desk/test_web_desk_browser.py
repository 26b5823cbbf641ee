"""``dsh attach --web`` in Debian's headless Chromium: real ``dsh mcp`` servers, the real
desk process, the page at a desktop width (1280 px) and a phone's (390 px)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from harness.chromium import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, CEILING, client

REQUEST = {"tool_name": "Bash", "input": {"command": "rm -rf build"}, "tool_use_id": "toolu_01"}

pytestmark = needs_chromium


class Agents:
    """MCP clients spawning real ``dsh mcp`` servers, driven from a background loop (the
    page is driven by Playwright's sync API on the test's own thread)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stack = contextlib.AsyncExitStack()

    def call(self, coroutine: Any, timeout: float = CEILING) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self, name: str, cwd: Path) -> Any:
        async def enter() -> Any:
            return await self.stack.enter_async_context(
                client("--wait", "20", name=name, cwd=str(cwd)))

        return self.call(enter())

    def ask(self, agent: Any, tool: str, arguments: dict[str, Any]) -> Any:
        """A tool call in flight; a concurrent future of its result."""
        return asyncio.run_coroutine_threadsafe(agent.call_tool(tool, arguments), self.loop)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.call(self.stack.aclose())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def _desk_url(desk: subprocess.Popen[bytes]) -> str:
    assert desk.stderr is not None
    while True:
        line = desk.stderr.readline().decode()
        assert line, "dsh attach --web ended without its URL"
        if line.startswith("dsh: open http://127.0.0.1:"):
            return line.split()[-1]


def _fits(page: Any, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_web_desk_lists_opens_and_answers_at_desktop_and_phone_width(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    from playwright.sync_api import expect

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    desk = subprocess.Popen([DSH, "attach", "--web"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    agents = Agents()
    try:
        url = _desk_url(desk)
        a = agents.start("agent-a", tmp_path / "a")
        b = agents.start("agent-b", tmp_path / "b")
        question = agents.ask(a, "ask_user_question", BATCH)
        permission = agents.ask(b, "approve_tool_use", REQUEST)
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.set_default_timeout(15000)
            page.goto(url)
            assert "token" not in page.url  # the token became the cookie
            entries = page.locator("button.entry")
            expect(entries).to_have_count(2)
            # the two servers ask at once: whichever came first is listed first
            first = page.locator("button.entry[data-kind='question']")
            second = page.locator("button.entry[data-kind='permission']")
            assert first.locator(".what").text_content() == "Which database?"
            assert first.locator(".who").text_content().startswith("agent-a · ")
            assert second.locator(".kind").text_content() == "permission"
            assert second.locator(".what").text_content() == "Bash: rm -rf build"
            _fits(page, 1280)

            first.click()  # open it: the same question card as dsh web
            page.locator("#composer").wait_for()
            assert page.locator("#qc-asker").text_content().startswith("agent-a · ")
            option = page.locator("button.option[data-label='PostgreSQL (Recommended)']")
            assert option.locator(".badge").first.text_content() == "Recommended"
            page.locator("#qc-back").click()  # back to the list, nothing sent
            expect(entries).to_have_count(2)
            assert not question.done()
            first.click()
            page.locator("button.option[data-label='SQLite']").click()
            page.locator("#qc-primary", has_text="Submit").click()
            answered = question.result(CEILING)
            assert answered.structured_content["answers"] == [{"id": "db", "selected": ["SQLite"]}]
            expect(entries).to_have_count(1)  # back at the list, the answered one gone

            page.set_viewport_size({"width": 390, "height": 760})  # a phone, through a tunnel
            _fits(page, 390)
            again = agents.ask(a, "ask_user_question", BATCH)  # the same question again
            expect(entries).to_have_count(2)
            _fits(page, 390)
            first.click()
            last = page.locator("button.option[data-label='SQLite']")
            expect(last.locator(".badge.last")).to_have_text("Last time")
            assert page.evaluate("document.activeElement.dataset.label") == "SQLite"
            assert last.get_attribute("aria-pressed") == "false"  # highlighted, not chosen
            page.wait_for_timeout(300)
            assert not again.done()  # never submitted by itself
            _fits(page, 390)
            page.locator("#qc-back").click()

            second.click()  # the permission card, at 390 px
            card = page.locator(".pc-arguments")
            card.wait_for()
            assert page.locator("#qc-asker").text_content().startswith("agent-b · ")
            # a desk grants per input where the agent runs, and says so as the terminal does
            assert page.locator("button[data-decision='allow_always']").text_content() == \
                "Always (this input, here, until dsh permissions rm)"
            _fits(page, 390)
            page.locator("button[data-decision='allow_once']").click()
            decided = permission.result(CEILING)
            assert '"behavior":"allow"' in decided.content[0].text.replace(" ", "")
            expect(entries).to_have_count(1)
            first.click()
            page.locator("#qc-other").fill("Mongo")
            page.locator("#qc-primary", has_text="Submit").click()
            assert again.result(CEILING).structured_content["answers"][0]["custom"] == "Mongo"
            expect(page.locator("#idle")).to_be_visible()
            context.close()
            browser.close()
    finally:
        agents.close()
        desk.terminate()
        try:
            desk.wait(10)
        except subprocess.TimeoutExpired:
            desk.kill()


def test_the_web_desk_speaks_of_agents_and_shows_a_refusals_own_reason(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    from playwright.sync_api import expect

    desk = subprocess.Popen([DSH, "attach", "--web"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    agents = Agents()
    try:
        url = _desk_url(desk)
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            page.set_default_timeout(15000)
            page.goto(url)
            expect(page.locator("#idle")).to_be_visible()
            empty = page.locator("#idle").text_content()
            a = agents.start("agent-a", tmp_path)
            question = agents.ask(a, "ask_user_question", BATCH)
            entries = page.locator("button.entry")
            expect(entries).to_have_count(1)
            entries.first.click()
            page.locator("#composer").wait_for()
            question_kicker = page.locator("#composer .kicker").text_content()
            page.locator("#qc-back").click()
            permission = agents.ask(a, "approve_tool_use", REQUEST)
            expect(entries).to_have_count(2)
            page.locator("button.entry[data-kind='permission']").click()
            page.locator(".pc-arguments").wait_for()
            permission_kicker = page.locator("#composer .kicker").text_content()
            page.locator("#pc-reason").fill("no " * 900)  # past the server's 2000 characters
            page.locator("button[data-decision='deny']").click()
            error = page.locator("#qc-error")
            expect(error).not_to_be_empty()
            refused = error.text_content()
            assert not permission.done()  # refused: still pending, nothing lost
            page.locator("#pc-reason").fill("not now")
            page.locator("button[data-decision='deny']").click()
            assert '"behavior":"deny"' in permission.result(CEILING).content[0].text.replace(
                " ", "")
            question.cancel()
            browser.close()
    finally:
        agents.close()
        desk.terminate()
        try:
            desk.wait(10)
        except subprocess.TimeoutExpired:
            desk.kill()

    assert "agents" in empty and "from dsh" not in empty
    assert question_kicker == "agent-a asks"
    assert permission_kicker == "agent-a asks permission"
    assert "at most 2000 characters" in refused, refused
