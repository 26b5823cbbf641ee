"""Every exit path of `dsh ask`, `dsh run` and `dsh attach` in a pseudo-terminal leaves it as
it found it.

`stty -a` before and after must match: answer, esc, ctrl-c, ctrl-d, SIGTERM, SIGHUP, timeout.
`tests/e2e/test_ask_pty.py` already pins `dsh ask` on SIGTERM and timeout; these are the
other paths, and all of them for `dsh run` with the terminal question UI.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

pytestmark = pytest.mark.pty

SCRIPT = {"turns": [
    {"content": "Let me ask.", "tool_calls": [{"name": "ask_user_question", "arguments": {
        "questions": [{"id": "db", "question": "Which database?",
                       "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}}]},
    {"content": "Done."},
]}


def _run_in_pty(tmp_path, command: str, keys: str | None, kill: int | None,
                shown: str = "Other") -> str:
    """Run ``command`` between two ``stty -a``; send ``keys`` or signal ``kill`` once it
    shows ``shown`` (a question's last option); everything printed, with ``rc=N`` from the
    shell."""
    import pexpect

    line = (f'stty -a > before; (echo "PID:$BASHPID"; exec {command}); echo "rc=$?"; '
            "stty -a > after")
    env = dict(os.environ, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn("bash", ["--noprofile", "--norc", "-c", line], env=env,
                          cwd=str(tmp_path), encoding="utf-8", timeout=15, dimensions=(24, 80))
    try:
        child.expect(r"PID:(\d+)")
        pid = int(child.match.group(1))
        child.expect(shown)  # the question (or the list) is on screen, the terminal raw
        if keys is not None:
            child.send(keys)
        if kill is not None:
            os.kill(pid, kill)
        child.expect(pexpect.EOF)
        output = child.before
    finally:
        child.close(force=True)
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text(), output
    return output


ASK = "dsh ask -q Deploy? -o yes -o no"


@pytest.mark.parametrize(("keys", "kill", "status", "said"), [
    ("2", None, 0, '{"answers":[{"id":"q1","selected":["no"]}]}'),
    ("\x1b", None, 130, "dsh: ASK_CANCELLED"),
    ("\x03", None, 130, "dsh: ASK_CANCELLED"),
    (None, signal.SIGHUP, 129, "dsh: ASK_ABORTED"),
], ids=["answer", "esc", "ctrl-c", "sighup"])
def test_dsh_ask_restores_the_terminal(tmp_path, keys, kill, status, said):
    output = _run_in_pty(tmp_path, ASK, keys, kill)
    assert f"rc={status}" in output and said in output


@pytest.mark.parametrize(("keys", "kill", "extra", "status", "said"), [
    ("2", None, "", 0, "Done."),
    ("\x1b", None, "", 0, "Done."),  # a cancelled ask is a tool error; the run goes on
    ("\x03", None, "", 130, None),  # terminal.md: ctrl-c at a run's question interrupts the run
    (None, signal.SIGTERM, "", 143, None),
    (None, signal.SIGHUP, "", 129, None),
    (None, None, "--question-timeout 1", 0, "Done."),
], ids=["answer", "esc", "ctrl-c", "sigterm", "sighup", "timeout"])
def test_dsh_run_restores_the_terminal(tmp_path, keys, kill, extra, status, said):
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    command = f"dsh run --model script:script.json {extra} go"
    output = _run_in_pty(tmp_path, command, keys, kill)
    assert f"rc={status}" in output, output
    if said is not None:
        assert said in output


@pytest.mark.parametrize(("keys", "kill", "status"), [
    ("\x04", None, 0),
    (None, signal.SIGTERM, 143),
    (None, signal.SIGHUP, 129),
], ids=["ctrl-d", "sigterm", "sighup"])
def test_dsh_attach_restores_the_terminal(tmp_path, keys, kill, status):
    # the desk holds the terminal raw for its whole life, not only while a screen runs
    output = _run_in_pty(tmp_path, "dsh attach", keys, kill, shown="waiting for questions")
    assert f"rc={status}" in output, output
