"""The desk's notifications: the protocol chosen, the bytes a terminal and tmux receive,
and ``notify_command`` run as a real child process."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import re
import shutil
import sys
import time

import pytest

from dsh_cli.core.limits import NOTIFICATION_CHARACTERS
from dsh_cli.desk.notify import (
    DeskNotifier,
    Focus,
    encode,
    notification,
    protocol,
    run_notify_command,
    summary,
    tmux_wrap,
)

EVENT = {"type": "question/requested", "rpc_id": "r1",
         "source": {"client": "claude-code", "cwd": "/home/me/app", "pid": 4242},
         "questions": [{"id": "db", "header": "Database", "question": "Which database?"}]}
HOSTILE = ("\x1b]0;pwned\x07\x1b[2J\x1b]777;notify;x;y\x07\u202eevil\u2066;\x9d8;;\x07"
           "\r\nnext\x00\x7f" + "x" * 1_000_000)


@pytest.mark.parametrize(("env", "expected"), [
    ({"KITTY_WINDOW_ID": "1", "TERM": "xterm-kitty"}, "osc99"),
    ({"TERM": "xterm-kitty"}, "osc99"),
    ({"WEZTERM_PANE": "3", "TERM_PROGRAM": "tmux"}, "osc777"),  # WezTerm, tmux inside
    ({"TERM_PROGRAM": "ghostty"}, "osc777"),
    ({"TERM": "foot"}, "osc777"),
    ({"TERM": "rxvt-unicode-256color"}, "osc777"),
    ({"VTE_VERSION": "7600"}, "osc777"),
    ({"TERM_PROGRAM": "iTerm.app"}, "osc9"),
    ({"TERM_PROGRAM": "vscode"}, "osc9"),
    ({"TERM_PROGRAM": "Apple_Terminal"}, "bell"),
    ({"TERM": "xterm-256color"}, "bell"),
    ({}, "bell"),
])
def test_the_protocol_follows_the_terminal(env, expected):
    assert protocol(env) == expected


def test_the_text_is_the_header_and_question_and_who_asks():
    assert notification(EVENT) == ("dsh: claude-code asks", "Database: Which database?")
    two = {**EVENT, "questions": [*EVENT["questions"], {"id": "b", "question": "And?"}]}
    assert notification(two)[1] == "Database: Which database? (+1 more)"
    permission = {"type": "permission/requested", "tool": "Bash", "source": {"client": "x"}}
    assert notification(permission) == ("dsh: x asks permission", "Bash")


def _controls(text: str) -> list[str]:
    return [c for c in text if ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0
            or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"]


def test_hostile_text_is_sanitised_and_bounded():
    event = {**EVENT, "source": {"client": HOSTILE},
             "questions": [{"id": "q", "header": HOSTILE, "question": HOSTILE}]}
    started = time.perf_counter()
    title, body = notification(event)
    took = time.perf_counter() - started
    assert took < 0.5  # a megabyte is cut before it is scanned
    for text in (title, body):
        assert not _controls(text)
        assert len(text) <= NOTIFICATION_CHARACTERS
    assert body.endswith("…")
    data = summary(event)
    assert not any(_controls(str(value)) for value in data.values())
    assert len(json.dumps(data)) < 4 * NOTIFICATION_CHARACTERS + 2000


@pytest.mark.parametrize("kind", ["osc99", "osc777", "osc9"])
def test_each_escape_is_one_sequence_with_a_clean_payload(kind):
    title, body = notification({**EVENT, "questions": [{"id": "q", "question": HOSTILE}]})
    sequence = encode(kind, title, body)
    if kind == "osc99":
        parts = re.fullmatch(r"\x1b\]99;i=dsh:d=0:p=title:e=1;([A-Za-z0-9+/=]*)\x1b\\"
                             r"\x1b\]99;i=dsh:d=1:p=body:e=1;([A-Za-z0-9+/=]*)\x1b\\", sequence)
        assert parts, sequence[:200]
        assert base64.b64decode(parts[1]).decode() == title
        assert base64.b64decode(parts[2]).decode() == body.replace(";", ",")
    else:
        opener = "\x1b]777;notify;" if kind == "osc777" else "\x1b]9;"
        assert sequence.startswith(opener) and sequence.endswith("\x07")
        payload = sequence[len(opener):-1]
        assert not _controls(payload)
        assert payload.count(";") == (1 if kind == "osc777" else 0)


@pytest.mark.parametrize("kind", ["osc99", "osc777", "osc9", "bell"])
def test_a_terminal_emulator_consumes_the_notification_whole(kind):
    """pyte parses the bytes as a terminal does: nothing of the text lands on the screen."""
    import pyte

    screen = pyte.Screen(80, 4)
    stream = pyte.ByteStream(screen)
    title, body = notification({**EVENT, "questions": [{"id": "q", "question": HOSTILE}]})
    stream.feed(encode(kind, title, body).encode())
    stream.feed(b"after")
    assert screen.display[0].rstrip() == "after"
    assert all(not line.strip() for line in screen.display[1:])
    assert screen.title == ""  # the payload's "ESC ] 0 ;" was text, never a title change


def test_tmux_passthrough_doubles_every_escape():
    inner = encode("osc777", "t", "b")
    wrapped = encode("osc777", "t", "b", tmux=True)
    assert wrapped == tmux_wrap(inner) == "\x1bPtmux;\x1b\x1b]777;notify;t;b\x07\x1b\\"
    assert encode("bell", "t", "b", tmux=True) == "\a"


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is installed by .ci/run")
def test_real_tmux_passes_the_notification_to_the_outer_terminal(tmp_path):
    """Through a real tmux server on a pty: the outer terminal gets the bare OSC 777."""
    import pexpect

    script = tmp_path / "emit.py"
    title, body = notification(EVENT)
    script.write_text("import sys\nsys.stdout.write(" + repr(encode("osc777", title, body,
                                                                     tmux=True))
                      + ")\nsys.stdout.flush()\nimport time\ntime.sleep(3)\n")
    socket = tmp_path / "tmux.sock"
    child = pexpect.spawn(
        "tmux", ["-f", "/dev/null", "-S", str(socket), "new-session", "-x", "80", "-y", "24",
                 f"tmux -S {socket} set -g allow-passthrough on; {sys.executable} {script}"],
        env={"TERM": "xterm-256color", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=15, dimensions=(24, 80))
    try:
        child.expect_exact(b"\x1b]777;notify;dsh: claude-code asks;Database: Which database?"
                           b"\x07")
    finally:
        child.close(force=True)
        import subprocess
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)


def test_focus_reports_are_taken_out_of_input():
    focus = Focus()
    assert focus.feed(b"a\x1b[Ob") == b"ab" and focus.focused is False
    assert focus.feed(b"\x1b[O\x1b[I") == b"" and focus.focused is True
    assert focus.feed(b"\x04") == b"\x04" and focus.focused is True


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_notify_command_gets_the_summary_as_json_on_stdin(tmp_path):
    out = tmp_path / "got.json"
    code = f"import sys; open({str(out)!r}, 'w').write(sys.stdin.read())"
    assert asyncio.run(run_notify_command(_python(code), summary(EVENT))) is None
    assert json.loads(out.read_text()) == {
        "kind": "question", "rpc_id": "r1", "agent": "claude-code", "cwd": "/home/me/app",
        "pid": 4242, "questions": 1, "title": "dsh: claude-code asks",
        "body": "Database: Which database?"}


def test_notify_command_that_hangs_is_killed_after_the_timeout():
    started = time.perf_counter()
    line = asyncio.run(run_notify_command(_python("import time; time.sleep(60)"), {},
                                          timeout=0.5))
    assert time.perf_counter() - started < 5
    assert line is not None and re.fullmatch(
        r"dsh: notify_command \S+ did not finish within 0.5 s; killed", line)


def test_notify_command_that_fails_says_so_in_one_sanitised_line():
    code = "import sys; sys.stderr.write('no \\x1b[31mtopic\\nat all'); sys.exit(3)"
    line = asyncio.run(run_notify_command(_python(code), {}))
    assert line is not None and line.endswith("exited 3: no topic at all")
    assert "\n" not in line and "\x1b" not in line
    missing = asyncio.run(run_notify_command(["/nonexistent/ntfy"], {}))
    assert missing == "dsh: notify_command /nonexistent/ntfy: cannot run it: " \
                      "No such file or directory"


def test_notify_command_that_floods_is_bounded():
    code = "import sys\nfor _ in range(400): sys.stdout.write('y' * 65536)"
    started = time.perf_counter()
    line = asyncio.run(run_notify_command(_python(code), {}, limit=4096))
    assert time.perf_counter() - started < 10
    assert line is not None and line.endswith("wrote more than 4096 bytes; the rest was dropped")
    code += "\nsys.exit(1)"
    failed = asyncio.run(run_notify_command(_python(code), {}, limit=4096))
    assert failed is not None and len(failed) < 400 and "exited 1" in failed


def test_the_notifier_notifies_at_once_when_unfocused_else_after_the_delay():
    async def main():
        written: list[str] = []
        notifier = DeskNotifier(write=written.append, say=written.append, kind="osc9",
                                delay=0.2)
        notifier.focus.focused = False
        notifier.arrived(EVENT, lambda: True)
        await asyncio.sleep(0.01)
        at_once = list(written)
        notifier.focus.focused = True
        notifier.arrived(EVENT, lambda: False)  # answered before the delay: nothing
        notifier.arrived(EVENT, lambda: True)
        await asyncio.sleep(0.05)
        before_delay = len(written)
        await asyncio.sleep(0.4)
        await notifier.close()
        return at_once, before_delay, written

    at_once, before_delay, written = asyncio.run(main())
    assert at_once == ["\x1b]9;dsh: claude-code asks: Database: Which database?\x07"]
    assert before_delay == 1 and len(written) == 2


def test_unfocused_desk_in_a_pty_notifies_a_real_dsh_mcp_batch(tmp_path):
    """A real ``dsh attach`` in a pty and a real ``dsh mcp``: focus lost, a batch arrives,
    the terminal gets OSC 777 and notify_command the summary; ctrl-d turns reporting off."""
    import os
    from pathlib import Path

    from harness.dsh_under_test import DSH
    from harness.mcp_util import BATCH, bounded, client
    from harness.pty_util import spawn

    got = tmp_path / "summary.json"
    hook = tmp_path / "hook.py"
    hook.write_text(f"import sys\nopen({str(got)!r}, 'w').write(sys.stdin.read())\n")
    config = Path(os.environ["DSH_HOME"]) / "config.toml"
    config.write_text(f"notify_command = [{json.dumps(sys.executable)}, {json.dumps(str(hook))}]"
                      "\nnotify_delay = 600\n")

    async def main():
        child = spawn(f"env -u TMUX -u KITTY_WINDOW_ID -u VTE_VERSION TERM_PROGRAM=WezTerm "
                      f"{DSH} attach", str(tmp_path), timeout=20)
        try:
            await asyncio.to_thread(child.expect, "nothing pending")
            await asyncio.to_thread(child.expect_exact, "\x1b[?1004h")
            child.send("\x1b[O")  # the terminal reports: focus went elsewhere
            await asyncio.sleep(0.3)
            async with client("--wait", "20", name="pty-agent") as mcp:
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                await asyncio.to_thread(
                    child.expect_exact, "\x1b]777;notify;dsh: pty-agent asks;Which database?\x07")
                await asyncio.to_thread(child.expect, "enter open")
                child.send("\r")
                await asyncio.to_thread(child.expect, "Which database")
                child.send("2")
                await call
                await asyncio.to_thread(child.expect, "nothing pending")
            child.sendcontrol("d")
            await asyncio.to_thread(child.expect, "desk closed")
            closing = child.before
            return closing
        finally:
            child.close(force=True)

    closing = bounded(main())
    assert "\x1b[?1004l" in closing
    data = json.loads(got.read_text())
    assert data["kind"] == "question" and data["agent"] == "pty-agent"
    assert data["body"] == "Which database?"


def test_sigterm_turns_focus_reporting_off(tmp_path):
    """The terminal is restored however the desk ends: SIGTERM on an idle desk."""
    import signal

    from harness.dsh_under_test import DSH
    from harness.pty_util import spawn

    child = spawn(f"{DSH} attach", str(tmp_path), timeout=20)
    try:
        child.expect_exact("\x1b[?1004h")
        child.kill(signal.SIGTERM)
        child.expect_exact("\x1b[?1004l")
    finally:
        child.close(force=True)


def _recorder(tmp_path, log):
    """A ``notify_command`` that logs when it ran and how many batches it was told of."""
    import os
    from pathlib import Path

    hook = tmp_path / "hook.py"
    hook.write_text(
        "import json, sys, time\n"
        "start = time.time()\n"
        "data = json.load(sys.stdin)\n"
        "time.sleep(0.2)  # a real notifier takes a while (a request to a phone service)\n"
        f"with open({str(log)!r}, 'a') as out:\n"
        "    out.write(json.dumps({'start': start, 'end': time.time(),\n"
        "                          'more': data.get('more', 0), 'body': data['body']}) + '\\n')\n")
    config = Path(os.environ["DSH_HOME"]) / "config.toml"
    config.write_text(f"notify_command = [{json.dumps(sys.executable)}, {json.dumps(str(hook))}]"
                      "\nnotify_delay = 0.01\n")


def _runs(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_300_async_batches_run_one_notify_command_at_a_time_summing_up_the_rest(tmp_path):
    """A real ``dsh attach --plain`` and ``dsh mcp``: 300 async batches at once never run two
    notify_commands together; each run covers the batches that came due meanwhile."""
    import subprocess

    from harness.dsh_under_test import DSH
    from harness.mcp_util import BATCH, bounded, client

    log = tmp_path / "runs.jsonl"
    _recorder(tmp_path, log)

    async def main():
        desk = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        try:
            assert desk.stdout is not None
            while b"nothing pending" not in await asyncio.wait_for(desk.stdout.readline(), 20):
                pass
            async with client("--wait", "20") as mcp:
                for _ in range(300):
                    result = await mcp.call_tool("ask_user_question",
                                                 {**BATCH, "delivery": "async"})
                    assert result.structured_content["accepted"] is True
                deadline = time.monotonic() + 60
                while sum(1 + run["more"] for run in _runs(log)) < 300:
                    assert time.monotonic() < deadline, _runs(log)
                    await asyncio.sleep(0.1)
            desk.stdin.close()
            await asyncio.wait_for(desk.wait(), 20)
        finally:
            if desk.returncode is None:
                desk.kill()
                await desk.wait()

    bounded(main(), 150)
    runs = sorted(_runs(log), key=lambda run: run["start"])
    assert sum(1 + run["more"] for run in runs) == 300
    for before, after in itertools.pairwise(runs):
        assert after["start"] >= before["end"], "two notify_commands ran at once"
    assert len(runs) < 100
    assert any(run["more"] and run["body"].endswith(f"+{run['more']} more waiting")
               for run in runs)


def _settled_screen(child, screen, done, timeout: float = 30.0) -> str:
    """Feed the child's output to ``screen`` until ``done(text)`` holds; the screen's text."""
    import pexpect

    deadline = time.monotonic() + timeout
    while not done(screen.text()):
        if time.monotonic() > deadline:
            raise AssertionError(f"the screen never settled:\n{screen.text()}")
        with contextlib.suppress(pexpect.TIMEOUT):
            screen.feed(child.read_nonblocking(4096, timeout=0.2))
    return screen.text()


def test_a_failing_notify_commands_line_leaves_the_list_drawn_whole(tmp_path):
    """A real ``dsh attach`` in a pty, unfocused: the batch's notify_command fails, its
    ``dsh:`` line is written, and the list under it has its header and each row once."""
    import os
    from pathlib import Path

    from harness.dsh_under_test import DSH
    from harness.mcp_util import BATCH, bounded, client
    from harness.pty_util import spawn
    from harness.vt_screen import Screen, wait_for_screen

    hook = tmp_path / "hook.py"
    hook.write_text("import sys\nsys.stdin.read()\nsys.stderr.write('topic gone')\nsys.exit(3)\n")
    config = Path(os.environ["DSH_HOME"]) / "config.toml"
    config.write_text(f"notify_command = [{json.dumps(sys.executable)}, {json.dumps(str(hook))}]"
                      "\nnotify_delay = 600\n")
    screen = Screen(24, 80)

    def whole(text: str) -> bool:
        return "exited 3: topic gone" in text and text.count("inbox · 1 pending") == 1 \
            and text.count("1. [question]") == 1

    async def main():
        child = spawn(f"{DSH} attach", str(tmp_path), timeout=20)
        try:
            await asyncio.to_thread(wait_for_screen, child, screen, "nothing pending")
            child.send("\x1b[O")  # focus went elsewhere: notify at once
            async with client("--wait", "20", name="pty-agent") as mcp:
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                await asyncio.to_thread(wait_for_screen, child, screen, "exited 3")
                shown = await asyncio.to_thread(_settled_screen, child, screen, whole, 10)
                call.cancel()
            child.sendcontrol("d")
            return shown
        finally:
            child.close(force=True)

    shown = bounded(main())
    lines = shown.splitlines()
    said = next(n for n, line in enumerate(lines) if "exited 3" in line)
    assert lines[said + 1].startswith("inbox · 1 pending"), shown  # the list after the line
