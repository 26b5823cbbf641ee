"""Issue 16: resizing while a question is shown leaves one frame and the text above intact.

Two real emulators: tmux, which rewraps rows on a resize like VTE, kitty, iTerm2 and
WezTerm (its scrollback is read back with wrapped rows joined), and pyte, which truncates
them like xterm (its screen is read back as drawn).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid

import pytest
from harness.dsh_under_test import DSH

pytestmark = [pytest.mark.pty,
              pytest.mark.skipif(DSH is None, reason="the dsh console script is not installed")]

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed (apt-get install tmux): it is the reflowing "
                         "terminal these tests resize")

QUESTION = ("Which deployment strategy should we use for the production rollout of the new "
            "payment service this week?")
OPTIONS = ["blue-green: run two identical environments and switch traffic at once",
           "canary: send a small share of traffic to the new version first and widen it",
           "rolling: replace instances one by one across the fleet"]
ASK = " ".join(["dsh ask -q", json.dumps(QUESTION), *(f"-o {json.dumps(o)}" for o in OPTIONS)])
CONVERSATION = [f"conversation line {n}: the quick brown fox jumps over the lazy dog, "
                f"then keeps running far away" for n in range(1, 25)]
# Enough text that the frame starts low on the window, as in a chat. (tmux keeps the
# cursor's row on a resize: rows above it that no longer fit go to the scrollback, where
# no redraw can reach them; a frame near the top that grows that much keeps a partial copy.)
PRINT_CONVERSATION = "; ".join(f"echo {json.dumps(line)}" for line in CONVERSATION)
SHORT = CONVERSATION[:8]  # for pyte, which keeps no scrollback
PRINT_SHORT = "; ".join(f"echo {json.dumps(line)}" for line in SHORT)
# The terminal's own marks must not decide for these tests; each emulator sets its own.
FOREIGN = ("TMUX", "TMUX_PANE", "STY", "VTE_VERSION", "KITTY_WINDOW_ID", "ALACRITTY_WINDOW_ID",
           "WEZTERM_PANE", "WT_SESSION", "TERM_PROGRAM", "XTERM_VERSION", "DSH_TERMINAL_REFLOW")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN}
    return {**env, **extra}


def _frames(lines: list[str]) -> int:
    return sum(line.startswith(" Which deployment strategy") for line in lines)


class Tmux:
    """One private tmux server (its own socket) with one window of a fixed size."""

    def __init__(self, command: str, columns: int, rows: int) -> None:
        self.socket = f"dsh-test-{uuid.uuid4().hex[:12]}"
        self.tmux("new-session", "-d", "-s", "t", "-x", str(columns), "-y", str(rows),
                  "bash --noprofile --norc -c " + json.dumps(command + "; sleep 60"))
        self.tmux("set", "-g", "window-size", "manual")

    def tmux(self, *args: str) -> str:
        # -f /dev/null: no user configuration; the server inherits this test's environment
        done = subprocess.run([TMUX, "-L", self.socket, "-f", "/dev/null", *args],
                              env=_env(), capture_output=True, text=True, timeout=10, check=True)
        return done.stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def screen(self) -> list[str]:
        return self.tmux("capture-pane", "-p", "-t", "t").rstrip("\n").split("\n")

    def scrollback(self) -> list[str]:
        """History and screen, each rewrapped line joined back into the line it was."""
        text = self.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "t")
        return [line.rstrip() for line in text.split("\n")]

    def settled(self, needle: str, timeout: float = 10.0) -> list[str]:
        """The screen once it shows ``needle`` and stops changing (the redraw is done)."""
        deadline, last, steady = time.monotonic() + timeout, None, 0
        while time.monotonic() < deadline:
            shown = self.screen()
            if any(needle in line for line in shown) and shown == last:
                steady += 1
                if steady >= 4:
                    return shown
            else:
                steady = 0
            last = shown
            time.sleep(0.15)
        raise AssertionError(f"the screen never settled showing {needle!r}: {last}")

    def resize(self, columns: int, rows: int, needle: str) -> None:
        self.tmux("resize-window", "-t", "t", "-x", str(columns), "-y", str(rows))
        width = int(self.tmux("display", "-p", "-t", "t", "#{pane_width}"))
        assert width == columns
        self.settled(needle)

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=10, check=False)


@pytest.fixture
def tmux_window():
    opened: list[Tmux] = []

    def open_window(command: str, columns: int = 100, rows: int = 30) -> Tmux:
        window = Tmux(command, columns, rows)
        opened.append(window)
        return window

    yield open_window
    for window in opened:
        window.close()


SIZES = [(60, 30), (40, 30), (100, 30), (100, 24)]  # narrower twice, back, then shorter


@needs_tmux
@pytest.mark.parametrize("keys", [["/", "c", "a", "n"], ["Tab", "h", "e", "l", "l", "o"]],
                         ids=["filter open", "typing in Other"])
def test_resizing_dsh_ask_in_tmux_leaves_one_frame_and_the_text_above(tmux_window, keys):
    window = tmux_window(f"{PRINT_CONVERSATION}; {ASK}")
    window.settled("esc cancel")
    window.keys(*keys)
    window.settled("esc")
    for columns, rows in SIZES:
        window.resize(columns, rows, "esc")
    lines = window.scrollback()
    assert _frames(lines) == 1, "\n".join(lines)
    top = lines.index(next(line for line in lines if line.startswith(" Which deployment")))
    assert lines[top - len(CONVERSATION):top] == CONVERSATION
    assert any(line.rstrip().endswith(("can  1/3", "Other: hello")) for line in lines[top:])
    window.keys("Escape")


@needs_tmux
def test_resizing_a_chat_question_in_tmux_keeps_the_streamed_reply_above(tmux_window, tmp_path):
    words = [f"word{n}" for n in range(120)]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"content": " ".join(words), "tool_calls": [{"name": "ask_user_question", "arguments": {
            "questions": [{"id": "q", "question": QUESTION,
                           "options": [{"label": label} for label in OPTIONS]}]}}]},
        {"content": "done"}]}), encoding="utf-8")
    window = tmux_window(f"dsh chat --model script:{script}")
    window.settled("›")
    window.keys("go", "Enter")
    window.settled("esc")
    window.keys("Tab", "h", "i")
    window.settled("Other: hi")
    for columns, rows in SIZES:
        window.resize(columns, rows, "esc")
    lines = window.scrollback()
    assert _frames(lines) == 1, "\n".join(lines)
    top = next(n for n, line in enumerate(lines) if line.startswith(" Which deployment"))
    shown = " ".join(lines[:top]).split()
    start = shown.index("word0")
    assert shown[start:start + len(words)] == words  # every word, once, in order
    window.keys("C-c")


def test_resizing_on_a_truncating_terminal_erases_nothing_above_the_frame(tmp_path):
    pyte = pytest.importorskip("pyte", reason="pyte (the test extra) emulates a terminal "
                                              "that truncates rows on a resize")
    import pexpect

    screen = pyte.Screen(100, 30)
    stream = pyte.Stream(screen)
    env = _env(TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn("bash", ["--noprofile", "--norc", "-c", f"{PRINT_SHORT}; {ASK}"],
                          env=env, cwd=str(tmp_path), encoding="utf-8", dimensions=(30, 100))

    def settle(needle: str, timeout: float = 10.0) -> list[str]:
        deadline, quiet = time.monotonic() + timeout, 0
        while time.monotonic() < deadline:
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.15))
                quiet = 0
            except pexpect.TIMEOUT:
                quiet += 1
            shown = [line.rstrip() for line in screen.display]
            if quiet >= 4 and any(needle in line for line in shown):
                return shown
        raise AssertionError(f"the screen never settled showing {needle!r}: {screen.display}")

    try:
        settle("esc cancel")
        child.send("/can")
        settle("esc")
        narrowest = 100
        for columns in (60, 40, 100):
            narrowest = min(narrowest, columns)
            screen.resize(30, columns)  # the terminal first, as a real one does
            child.setwinsize(30, columns)
            shown = settle("esc")
        assert _frames(shown) == 1, "\n".join(shown)
        top = next(n for n, line in enumerate(shown) if line.startswith(" Which deployment"))
        # a truncating terminal cut each line at the narrowest width; none was erased
        above = [line for line in shown[:top] if line.startswith("conversation")]
        assert above == [line[:narrowest] for line in SHORT]
        child.send("\x1b")
    finally:
        child.close(force=True)
