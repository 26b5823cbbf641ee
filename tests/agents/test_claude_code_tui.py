"""Claude Code's interactive TUI (not ``claude -p``) asks through ``dsh mcp``, driven in tmux.

The TUI declares the MCP tasks extension, where ``claude -p`` does not, and moves every
task to the background: it tells its model "you can keep working in the meantime", ends
the turn, and later wakes the model with the result framed as a "[SYSTEM NOTIFICATION - NOT
USER INPUT]". So a waiting question must not be a task (issue 42): it holds the turn until
the desk answers and reaches the model as that tool call's result. An async one is a task:
the call returns at once with dsh's note (the human answers later; the answer is theirs),
and the answer reaches the model later, saying it is the human's, naming the ticket.

The TUI runs in a tmux server of the test's own (its socket in the test's folder), against
the scripted model, with its first-run dialogs marked done in ``~/.claude.json``; every
wait polls the screen, the desk or the model against a deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agent_rig import BATCH, RUN_CEILING, Agent
from model_server import ModelServer

PROMPT = "Ask me which database to use."
ANSWER = [{"id": "db", "selected": ["SQLite"]}]
COMPACT = json.dumps({"answers": ANSWER}, separators=(",", ":"))
READY = "(shift+tab to cycle)"  # the permission mode's hint, shown while the TUI takes keys
WAITING = "waiting for the human at the dsh desk"  # dsh's progress message, under the call


class Pane:
    """One program in a tmux server of its own: keys in, the screen's text out."""

    def __init__(self, socket: Path, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.tmux = ["tmux", "-S", str(socket), "-f", os.devnull]
        settings = [part for key, value in env.items() for part in ("-e", f"{key}={value}")]
        subprocess.run([*self.tmux, "new-session", "-d", "-s", "agent", "-x", "160", "-y", "50",
                        "-c", str(cwd), *settings, *argv], check=True, timeout=30)
        # a program that exits leaves its last screen, for the failure message
        subprocess.run([*self.tmux, "set-option", "-t", "agent", "remain-on-exit", "on"],
                       check=True, timeout=30)

    def screen(self) -> str:
        done = subprocess.run([*self.tmux, "capture-pane", "-p", "-t", "agent"],
                              capture_output=True, text=True, timeout=30)
        return done.stdout

    def type(self, text: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "agent", "-l", text], check=True,
                       timeout=30)
        subprocess.run([*self.tmux, "send-keys", "-t", "agent", "Enter"], check=True,
                       timeout=30)

    def until(self, *shown: str, timeout: float = RUN_CEILING) -> str:
        """The screen once it shows any of ``shown``; the test fails with the screen at the
        deadline."""
        def showing() -> str | None:
            screen = self.screen()
            return screen if any(text in screen for text in shown) else None
        return str(until(showing, f"{' or '.join(map(repr, shown))} on the screen", timeout,
                         self.screen))

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True, timeout=30)


def until(found: Callable[[], object], what: str, timeout: float = RUN_CEILING,
          shown: Callable[[], str] | None = None) -> object:
    """``found()`` once truthy, polled until the deadline; then the test fails, saying what."""
    deadline = time.monotonic() + timeout
    while not (value := found()):
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout} s" + (f":\n{shown()}" if shown else ""))
        time.sleep(0.2)
    return value


def first_run_done(agent: Agent) -> None:
    """The TUI's first-run dialogs (theme, the API key, trusting the folder), marked done."""
    path = agent.home / ".claude.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    key = agent.settings["ANTHROPIC_API_KEY"]
    document.update({"hasCompletedOnboarding": True, "theme": "dark",
                     "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
                     "projects": {str(agent.project): {"hasTrustDialogAccepted": True}}})
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


@pytest.fixture
def claude_tui(make_agent, tmp_path) -> Iterator[Callable[[ModelServer], Pane]]:
    """``claude_tui(model)``: the TUI in tmux, dsh installed, its MCP server connected."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux drives the TUI, and this machine lacks it")
    panes: list[Pane] = []

    def start(model: ModelServer) -> Pane:
        agent = make_agent("claude", model.url)
        agent.install("--wait", "20")
        first_run_done(agent)
        env = {key: value for key, value in agent.env().items() if key != "CI"}
        env.update(TERM="xterm-256color")
        pane = Pane(tmp_path / f"tmux-{len(panes)}", [agent.program], agent.project, env)
        panes.append(pane)
        pane.until(READY)
        # The TUI connects its MCP servers in the background (MCP_CONNECTION_NONBLOCKING
        # does not hold it): wait on /mcp for dsh's tools before the prompt.
        pane.type("/mcp")
        pane.until("✔ dsh")
        subprocess.run([*pane.tmux, "send-keys", "-t", "agent", "Escape"], check=True,
                       timeout=30)
        pane.until(READY)
        return pane

    yield start
    for pane in panes:
        pane.close()


def _bodies(model: ModelServer) -> list[str]:
    return [json.dumps(turn.body) for turn in list(model.turns)]


@pytest.mark.parametrize("delivery", ["wait", "async"])
def test_the_tui_holds_a_waiting_question_and_hands_on_an_async_answer_as_the_humans(
        delivery, claude_tui, desk):
    arguments = BATCH if delivery == "wait" else {**BATCH, "delivery": "async"}
    with ModelServer(call=("ask_user_question", arguments)) as model:
        pane = claude_tui(model)
        pane.type(PROMPT)
        requested = desk.event("question/requested")
        ticket = requested["rpc_id"]
        if delivery == "wait":
            # the turn is held: the TUI shows the call waiting, the model has no result yet
            held = pane.until(WAITING, "MCP task")  # the latter: moved to the background
            assert WAITING in held and "esc to interrupt" in held, held
            assert model.results() == []
        else:
            # the call returned at once with dsh's note, and the turn ended unanswered
            note = until(lambda: model.results(), "tool result at the model")[0]
            assert f"ticket {ticket}" in note and "the human's answer to this question" in note
            pane.until("1 MCP task")  # in the background
        desk.send({"type": "question/answer", "rpc_id": ticket,
                   "session_id": requested["session_id"], "answers": ANSWER})
        if delivery == "wait":
            until(lambda: COMPACT in model.results(), "answer as the call's result",
                  shown=pane.screen)
            assert model.results() == [COMPACT]  # the call's own result, and nothing else
            assert not any("NOT USER INPUT" in body for body in _bodies(model))
        else:
            told = f"This is the human's answer to your question (ticket {ticket})"
            woken = until(lambda: [body for body in _bodies(model) if told in body],
                          "later request carrying the human's answer", shown=pane.screen)
            # what Claude Code 2.1.332 wraps it in (README's agent table says so)
            assert "NOT USER INPUT" in woken[0] and "SQLite" in woken[0]
        pane.until("done")
