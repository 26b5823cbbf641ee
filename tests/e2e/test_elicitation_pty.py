"""``@modelcontextprotocol/server-everything``'s every-type form, answered by keys in a
pseudo-terminal: ``dsh run`` on a terminal, a scripted model that calls
``trigger-elicitation-request``, and the server's reply (the tool result the model's next
request carries) naming exactly what the keys chose; decline and cancel reach it as such.
"""

from __future__ import annotations

import json
import os

import pexpect
import pytest
from fakes.npm_programs import npm_program
from fakes.openai_server import Reply
from harness.dsh_under_test import DSH

pytest.importorskip("pyte", reason="pyte (the test extra) reads the terminal's screen")
from harness.vt_screen import Screen, wait_for_screen  # after the skip

pytestmark = pytest.mark.pty

FORM = "mcp__everything__trigger-elicitation-request"
ROWS, COLUMNS = 30, 100
HEADING = "── everything asks: Please provide inputs for the following fields:"
CTRL_S, CTRL_U, ESC = "\x13", "\x15", "\x1b"


def start_run(tmp_path, server, forms: int):
    """``dsh run`` against the fake model, which calls the form ``forms`` times, then ends."""
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"everything": {
        "command": npm_program("mcp-server-everything"), "args": ["stdio"]}}}))
    for number in range(forms):
        server.enqueue(Reply.tool_calls([(FORM, {}, f"call_{number}")]))
    server.enqueue(Reply.text("Thanks, noted."))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1",
               DSH_API_KEY="sk-test")
    child = pexpect.spawn(DSH, ["run", "-m", "fake-model", "--base-url", server.base_url,
                                "--mcp-config", str(config), "--allow", "mcp__everything",
                                "fill in the form"],
                          env=env, cwd=str(tmp_path), encoding="utf-8",
                          dimensions=(ROWS, COLUMNS), timeout=60)
    return child, Screen(ROWS, COLUMNS)


def answer(child, screen: Screen, shown: str, *keys: str) -> str:
    """Wait until the screen shows ``shown`` (the question's title), then send ``keys``."""
    text = wait_for_screen(child, screen, shown)
    for key in keys:
        child.send(key)
    return text


def finished(child, screen: Screen) -> str:
    """The screen once dsh has exited with status 0."""
    child.expect(pexpect.EOF)
    child.close()
    screen.feed(child.before)
    assert child.exitstatus == 0, screen.text()
    return screen.text()


def raw_result(message: dict) -> dict:
    """The server's ``Raw result`` (what it received) from the tool message the model got."""
    assert message["role"] == "tool", message
    return json.loads(message["content"].split("Raw result:", 1)[1])


def test_the_every_type_form_answered_by_keys_reaches_the_server_as_typed(tmp_path, server):
    child, screen = start_run(tmp_path, server, forms=1)
    first = answer(child, screen, "Your full, legal name", "Ada Lovelace\r")
    assert HEADING in first and "Question 1/13" in first  # who asks, and how much
    answer(child, screen, "Agree to the terms and conditions", "1")  # boolean: 1. Yes
    answer(child, screen, "Favorite first line of a story", CTRL_S)  # skipped: its default
    answer(child, screen, "Your email address", "ada at example\r")
    answer(child, screen, "expected an e-mail address like name@example.com",
           CTRL_U, "ada@example.com\r")
    answer(child, screen, "Portfolio / personal website", "https://ada.example.org\r")
    answer(child, screen, "Your date of birth", "1815-12-10\r")
    answer(child, screen, "Your favorite integer", "150\r")  # out of range: re-asked
    text = answer(child, screen, "expected at most 100", CTRL_U, "7\r")
    assert "expects a whole number from 1 to 100" in text and "› 150" in text
    answer(child, screen, "there are no wrong answers", "2.5\r")
    answer(child, screen, "Choose your favorite friend", "3")  # Joey
    answer(child, screen, "Choose your favorite instruments", "2", "4", "\r")  # Piano, Drums
    answer(child, screen, "Choose your favorite hero", "3")  # Wonder Woman
    answer(child, screen, "Choose your favorite types of fish", "s")  # its default: Tuna
    answer(child, screen, "Choose your favorite type of pet", "2")  # Dogs
    review = answer(child, screen, "Review · 13 questions", "\r")
    finished(child, screen)
    assert HEADING in review
    assert ' 3. String with default: "It was a dark and stormy night."' in review
    assert " 12. Titled Multiple Select Enum: Tuna" in review
    assert "servers must not ask for secrets" not in review  # no field here reads as one
    assert raw_result(server.requests[1].body["messages"][-1]) == {"action": "accept",
                                                                   "content": {
        "name": "Ada Lovelace", "check": True, "firstLine": "It was a dark and stormy night.",
        "email": "ada@example.com", "homepage": "https://ada.example.org",
        "birthdate": "1815-12-10", "integer": 7, "number": 2.5,
        "untitledSingleSelectEnum": "Joey", "untitledMultipleSelectEnum": ["Piano", "Drums"],
        "titledSingleSelectEnum": "hero-3", "titledMultipleSelectEnum": ["fish-1"],
        "legacyTitledEnum": "pet-2"}}


def test_decline_on_the_review_and_esc_reach_the_server_as_decline_and_cancel(tmp_path,
                                                                              server):
    child, screen = start_run(tmp_path, server, forms=2)
    answer(child, screen, "Your full, legal name", "Ada\r", *[CTRL_S] * 12)
    answer(child, screen, "Review · 13 questions", "d")  # decline, from the review screen
    # the second form: esc on its first question, with nothing typed, cancels it at once
    wait_for_screen(child, screen, "✗ questions declined")
    answer(child, screen, "Question 1/13", ESC)
    transcript = finished(child, screen)
    assert "✗ questions declined" in transcript and "✗ questions cancelled" in transcript
    assert raw_result(server.requests[1].body["messages"][-1]) == {"action": "decline"}
    assert raw_result(server.requests[2].body["messages"][-1]) == {"action": "cancel"}


def test_ctrl_c_at_the_form_interrupts_the_run_with_130_and_no_traceback(tmp_path, server):
    child, screen = start_run(tmp_path, server, forms=1)
    answer(child, screen, "Your full, legal name", "Ada\r")
    answer(child, screen, "Agree to the terms and conditions", "\x03")
    child.expect(pexpect.EOF)
    child.close()
    output = child.before
    screen.feed(output)
    assert child.exitstatus == 130, screen.text()
    assert "✗ questions aborted" in screen.text()
    assert "Traceback" not in output and "raised" not in output, output  # the SDK's log line
    assert len(server.requests) == 1  # the model never saw a result
