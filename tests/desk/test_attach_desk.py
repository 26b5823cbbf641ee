"""``dsh attach`` for a human: plain lines through pipes, and the terminal UI in a pty."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from typing import Any

import pytest
from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, CEILING, attach_here, bounded, client, held_agent

OTHER = {"questions": [{"id": "name", "question": "Project name?"}]}


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """One ``dsh mcp --wait 30`` named agent-a (its own DSH_HOME) for the plain desk's tests
    whose every batch is answered before they end: a desk that attaches later finds nothing
    pending. One child, not one per test (each start is about a second of CPU). Its batches'
    numbers go on counting from test to test (one counter per DSH_HOME), so these tests read
    the number the desk shows. The two servers' test and the terminal desk's keep their own."""
    yield from held_agent(tmp_path_factory, "--wait", "30", name="agent-a")


@pytest.fixture
def at_agent(agent, monkeypatch):
    """The shared agent's session, this test's desks attaching where it serves."""
    attach_here(agent, monkeypatch)
    return agent.here


async def _answered_at_a_jsonl_desk(call: Any) -> Any:
    """The pending batch answered (SQLite) at a fresh ``dsh attach --jsonl``; ``call``'s result."""
    again = await asyncio.create_subprocess_exec(
        DSH, "attach", "--jsonl", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    requested = json.loads(await asyncio.wait_for(again.stdout.readline(), CEILING))
    frame = {"type": "question/answer", "rpc_id": requested["rpc_id"],
             "session_id": requested["session_id"],
             "answers": [{"id": "db", "selected": ["SQLite"]}]}
    again.stdin.write((json.dumps(frame) + "\n").encode())
    result = await call
    again.stdin.close()
    await again.wait()
    return result


def _number(listed: str, then: str = "") -> str:
    """The number the desk shows for the (last) listed entry whose line has ``then``."""
    return re.findall(rf"\+ (\d+)\. \[question\] [^\n]*{re.escape(then)}", listed)[-1]


async def _read_until(stream, text: str) -> str:
    seen = ""
    while text not in seen:
        chunk = await asyncio.wait_for(stream.read(4096), CEILING)
        assert chunk, f"the desk ended before {text!r}; it wrote {seen!r}"
        seen += chunk.decode()
    return seen


def test_plain_inbox_lists_two_servers_and_opens_either_first(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()

    async def main():
        desk = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            await _read_until(desk.stdout, "nothing pending")
            async with client("--wait", "20", name="agent-a", cwd=str(tmp_path / "a")) as a, \
                    client("--wait", "20", name="agent-b", cwd=str(tmp_path / "b")) as b:
                call_a = asyncio.ensure_future(a.call_tool("ask_user_question", BATCH))
                listed = await _read_until(desk.stdout, "[question] 0s · agent-a")
                call_b = asyncio.ensure_future(b.call_tool("ask_user_question", OTHER))
                listed += await _read_until(desk.stdout, "[question] 0s · agent-b")
                desk.stdin.write(b"2\n")  # any entry, in any order: b's first
                second = await _read_until(desk.stdout, "answer (")
                desk.stdin.write(b"acme\n")
                back = await _read_until(desk.stdout, "- 2. answered here")
                desk.stdin.write(b"1\n")
                first = await _read_until(desk.stdout, "answer (")
                desk.stdin.write(b"2\n")
                result_a, result_b = await call_a, await call_b
                idle = await _read_until(desk.stdout, "nothing pending")
            desk.stdin.close()
            status = await asyncio.wait_for(desk.wait(), CEILING)
            return listed, first, second, back, idle, result_a, result_b, status
        finally:
            if desk.returncode is None:
                desk.kill()

    listed, first, second, back, idle, result_a, result_b, status = bounded(main())
    assert "Which database?" in listed and "Project name?" in listed
    assert "agent-a asks" in first and "Which database?" in first
    assert "agent-b" not in first
    assert "agent-b asks" in second and "Project name?" in second
    assert "Which database?" not in second
    assert "- 2. answered here" in back  # the list heard it leave
    assert result_a.structured_content["answers"][0]["selected"] == ["SQLite"]
    assert result_b.structured_content["answers"][0]["custom"] == "acme"
    assert "nothing pending" in idle  # both answered: the desk waits again
    assert status == 0


def test_plain_desk_closed_mid_batch_leaves_it_pending(at_agent):
    async def main():
        call = asyncio.ensure_future(at_agent.call_tool("ask_user_question", BATCH))
        desk = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        listed = await _read_until(desk.stdout, "Which database?")
        desk.stdin.write(f"{_number(listed)}\n".encode())
        await _read_until(desk.stdout, "answer (")
        desk.stdin.close()  # ctrl-d: the desk closes, the batch stays with its server
        closing = (await desk.stdout.read()).decode()
        await desk.wait()
        assert not call.done()
        result = await _answered_at_a_jsonl_desk(call)
        return closing, result

    closing, result = bounded(main())
    assert "desk closed" in closing
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_terminal_inbox_opens_by_enter_answers_by_keys_and_counts_in_the_title(tmp_path):
    from harness.pty_util import idle_terminal_desk

    async def main():
        async with idle_terminal_desk(DSH, str(tmp_path)) as child:
            async with client("--wait", "20", name="pty-agent") as mcp:
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                # the count in the terminal's title, then the list
                await asyncio.to_thread(child.expect_exact, "\x1b]2;dsh attach · 1 pending\x07")
                await asyncio.to_thread(child.expect, "inbox · 1 pending")
                await asyncio.to_thread(child.expect, "pty-agent")
                child.send("\r")  # enter opens the entry under the cursor
                await asyncio.to_thread(child.expect, "pty-agent asks")
                await asyncio.to_thread(child.expect, "Which database")
                child.send("2")  # single-select: the digit picks and submits
                result = await call
                await asyncio.to_thread(child.expect, "nothing pending")
            child.sendcontrol("d")
            await asyncio.to_thread(child.expect, "desk closed")
            await asyncio.to_thread(child.expect_exact, "\x1b[23;2t")  # the old title back
            return result

    result = bounded(main())
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_terminal_desk_ctrl_d_and_sighup_hand_the_shown_batch_back(tmp_path):
    import signal

    from harness.pty_util import spawn

    async def shown(name: str):
        child = spawn(f"{DSH} attach", str(tmp_path), timeout=20)
        await asyncio.to_thread(child.expect, "enter open")
        child.send("\r")
        await asyncio.to_thread(child.expect, "Which database")
        await asyncio.to_thread(child.expect, "esc inbox")  # the key help, drawn in full
        return child

    async def main():
        async with client("--wait", "20", name="pty-agent") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            first = await shown("first")
            help_line = first.before
            first.sendcontrol("d")  # the desk's own key closes it with a batch on screen
            await asyncio.to_thread(first.expect, "desk closed")
            closed = first.before
            first.close(force=True)
            second = await shown("second")
            second.kill(signal.SIGHUP)
            await asyncio.to_thread(second.expect, "questions left pending")
            hung_up = second.before + second.after
            second.close(force=True)
            assert not call.done()  # neither closing sent a thing: still pending
            result = await _answered_at_a_jsonl_desk(call)
            return help_line, closed, hung_up, result

    help_line, closed, hung_up, result = bounded(main())
    assert "ctrl-d close" in help_line
    assert "↩ questions left pending for the next `dsh attach`" in closed
    assert "questions aborted" not in hung_up and "questions aborted" not in closed
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_terminal_desk_dismiss_leaves_a_one_line_trace(tmp_path):
    from harness.pty_util import idle_terminal_desk
    from harness.vt_screen import Screen, wait_for_screen

    screen = Screen(24, 80)

    async def main():
        async with idle_terminal_desk(DSH, str(tmp_path)) as child:
            async with client("--wait", "20", name="pty-agent") as mcp:
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                await asyncio.to_thread(wait_for_screen, child, screen, "enter open")
                child.send("x")
                result = await call
                shown = await asyncio.to_thread(wait_for_screen, child, screen,
                                                "nothing pending")
            child.sendcontrol("d")
            await asyncio.to_thread(child.expect, "desk closed")
            return result, shown

    result, shown = bounded(main())
    assert result.structured_content["error"]["code"] == "ASK_CANCELLED"
    assert "✗ 1. dismissed · pty-agent · Which database?" in shown


def test_terminal_desk_says_answered_at_another_desk_when_another_desk_answers(tmp_path):
    from harness.mcp_util import jsonl_desk
    from harness.pty_util import idle_terminal_desk
    from harness.vt_screen import Screen, wait_for_screen

    screen = Screen(24, 80)

    async def main():
        async with idle_terminal_desk(DSH, str(tmp_path)) as child:
            async with jsonl_desk() as other, client("--wait", "20", name="pty-agent") as mcp:
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                requested = await other.event("question/requested")
                await asyncio.to_thread(wait_for_screen, child, screen, "enter open")
                child.send("\r")
                # the open entry's options: the list's row shows "Which database?" already
                await asyncio.to_thread(wait_for_screen, child, screen, "PostgreSQL")
                await other.answer(requested, [{"id": "db", "selected": ["SQLite"]}])
                await call
                shown = await asyncio.to_thread(wait_for_screen, child, screen,
                                                "nothing pending")
            child.sendcontrol("d")
            await asyncio.to_thread(child.expect, "desk closed")
            return shown

    shown = bounded(main())
    assert "✓ questions answered at another desk" in shown
    assert "aborted" not in shown and "withdrawn" not in shown


def test_a_desk_that_restarts_shows_a_batchs_true_age(at_agent):
    import time

    async def plain_desk():
        return await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    async def main():
        first = await plain_desk()
        second = None
        try:
            await _read_until(first.stdout, "nothing pending")  # it follows the server
            call = asyncio.ensure_future(at_agent.call_tool("ask_user_question", BATCH))
            seen = await _read_until(first.stdout, "[question] 0s · agent-a")
            asked = time.monotonic()
            first.stdin.close()  # the desk closes; the batch stays pending
            await asyncio.wait_for(first.wait(), CEILING)
            while time.monotonic() - asked < 3:  # the age under test: let it grow
                await asyncio.sleep(0.1)
            second = await plain_desk()
            again = await _read_until(second.stdout, "· agent-a")
            second.stdin.write(f"{_number(again, 'agent-a')}\n".encode())
            await _read_until(second.stdout, "answer (")
            second.stdin.write(b"2\n")  # answered: nothing is left for the next test
            await call
            return seen, again
        finally:
            for desk in (first, second):
                if desk is not None and desk.returncode is None:
                    desk.kill()
                    await desk.wait()

    seen, again = bounded(main())
    assert "[question] 0s · agent-a" in seen  # the first desk saw it as it was asked
    age = int(re.search(r"\+ \d+\. \[question\] (\d+)s · agent-a", again).group(1))
    assert age >= 3, again  # the batch's age, not the time since this desk attached


def test_an_entry_keeps_its_number_at_a_desk_that_attaches_later(at_agent):
    async def plain_desk():
        return await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    async def main():
        first = await plain_desk()
        second = None
        try:
            call_x = asyncio.ensure_future(at_agent.call_tool("ask_user_question", BATCH))
            listed = await _read_until(first.stdout, "Which database?")
            x = _number(listed)
            call_y = asyncio.ensure_future(at_agent.call_tool("ask_user_question", OTHER))
            listed += await _read_until(first.stdout, "Project name?\n")
            y = _number(listed, "Project name?")
            assert int(y) > int(x)
            first.stdin.write(f"{x}\n".encode())  # entry x answered here: y is left
            await _read_until(first.stdout, "answer (")
            first.stdin.write(b"2\n")
            await call_x
            second = await plain_desk()  # a desk that never saw entry x
            later = await _read_until(second.stdout, "· agent-a")
            second.stdin.write(f"{y}\n".encode())  # the number the first desk showed
            opened = await _read_until(second.stdout, "answer (")
            second.stdin.write(b"acme\n")  # answered: nothing is left for the next test
            await call_y
            return listed, y, later, opened
        finally:
            for desk in (first, second):
                if desk is not None and desk.returncode is None:
                    desk.kill()
                    await desk.wait()

    listed, y, later, opened = bounded(main())
    what = re.search(rf"\+ {y}\. \[question\] \d+s · agent-a · .* · (.*)\n", listed).group(1)
    assert re.search(rf"\+ {y}\. \[question\] \d+s · agent-a · .* · {re.escape(what)}", later)
    assert f"no entry {y}" not in opened


def test_a_peer_servers_hello_and_refusal_reach_the_plain_desk_without_escapes(runtime_dir):
    """A socket in the desk directory that speaks as a server: its browser URL and its
    refusal's message carry terminal escapes; the desk prints them inert."""
    import socket

    hostile = "\x1b]0;pwned\x07\x1b[2Jevil\u202e"

    async def main():
        runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = runtime_dir / "mcp-4194300.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(1)
        listener.setblocking(False)
        desk = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            conn, _ = await asyncio.wait_for(
                asyncio.get_running_loop().sock_accept(listener), CEILING)
            for event in ({"type": "desk/hello", "pid": 1, "cwd": "/",
                           "web_url": "http://x/" + hostile},
                          {"type": "response/ack", "rpc_id": "r", "accepted": False,
                           "reason": "bad-response", "message": hostile}):
                conn.sendall((json.dumps(event) + "\n").encode())
            shown = await _read_until(desk.stdout, "the server refused the answer")
            while "\n" not in shown.split("the server refused the answer", 1)[1]:
                shown += await _read_until(desk.stdout, "\n")  # the whole line
            return shown
        finally:
            desk.kill()
            await desk.wait()
            listener.close()

    shown = bounded(main())
    assert "asks in the browser" in shown and "evil" in shown
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
