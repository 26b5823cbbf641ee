"""Async questions in the chat: drawn when the turn ends, left pending, ``/pending``,
``/answer``, ``/cancel``; an outcome arriving at an idle prompt starts a turn and keeps
what was typed (docs/async-questions.md)."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
from typing import Any

from harness.dsh_under_test import DSH

from dsh_cli.chat.prompt import TerminalPrompt
from dsh_cli.chat.repl import ChatRepl
from dsh_cli.core.events import UserMessage
from dsh_cli.transcript import TranscriptRenderer

ASK = {"questions": [{"id": "db", "question": "Which database later?",
                      "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}],
       "delivery": "async"}
TURNS = [{"tool_calls": [{"id": "ask", "name": "ask_user_question", "arguments": ASK}]},
         {"content": "working on it"},
         {"content": "noted the answer"},
         {"content": "and the last message"}]


class WaitsLikeTheWeb:
    """A provider that shows nothing itself (as the web's): only the table settles."""

    async def ask(self, context: Any) -> Any:
        await asyncio.get_running_loop().create_future()


def test_a_timeout_at_the_idle_prompt_starts_a_turn_and_keeps_the_typed_text(
        make_runtime, scripted):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    runtime = make_runtime(scripted(*TURNS))
    runtime.ui.timeout = 0.5
    runtime.ui.register_provider(WaitsLikeTheWeb())
    out = io.StringIO()
    seen: list[Any] = []
    runtime.events.subscribe(seen.append)
    runtime.events.subscribe(TranscriptRenderer(out, color=False))

    async def main() -> int:
        with create_pipe_input() as pipe:
            prompt = TerminalPrompt(input=pipe, output=DummyOutput())
            repl = ChatRepl(runtime, prompt, TranscriptRenderer(out, color=False),
                            errors=io.StringIO(), handle_sigint=False)
            pipe.send_text("start\r/pending\r")
            running = asyncio.ensure_future(repl.run())
            for _ in range(100):
                await asyncio.sleep(0.05)
                if "Which database later?" in out.getvalue():
                    break
            pipe.send_text("hel")  # half a message when the timeout comes
            for _ in range(100):
                await asyncio.sleep(0.05)
                if any(isinstance(e, UserMessage) and e.ticket for e in seen):
                    break
            await asyncio.sleep(0.3)
            pipe.send_text("lo\r")
            await asyncio.sleep(0.3)
            pipe.send_text("\x04")
            return await asyncio.wait_for(running, 10)

    assert asyncio.run(main()) == 0
    text = out.getvalue()
    assert "Which database later?" in text  # /pending listed it
    ticket = next(e.ticket for e in seen if isinstance(e, UserMessage) and e.ticket)
    assert f"  {ticket}  Which database later?" in text
    users = [m["content"] for m in runtime.loop.messages if m["role"] == "user"]
    assert users[0] == "start" and ticket in users[1] and '"ASK_TIMEOUT"' in users[1]
    assert users[2] == "hello"  # the prompt kept "hel" across the interruption
    assert runtime.loop.messages[-1]["content"] == "and the last message"


def _chat(tmp_path, lines: str, *args: str) -> subprocess.CompletedProcess[str]:
    model = tmp_path / "script.json"
    model.write_text(json.dumps({"turns": TURNS}))
    return subprocess.run([DSH, "chat", "--plain", "--model", f"script:{model}", *args],
                          input=lines, capture_output=True, text=True, timeout=30)


def test_plain_chat_leaves_the_batch_pending_lists_it_and_answers_it_later(tmp_path):
    chat = _chat(tmp_path, "start\n/discuss\n/pending\n/answer q_nope\n/cancel q_nope\n"
                 "/answer\n2\n/answer\n")
    assert chat.returncode == 0, chat.stderr
    out = chat.stdout
    assert "1 async question pending: /answer" in out
    listed = [line for line in out.splitlines() if line.endswith("Which database later?")]
    ticket = listed[0].split()[0]
    assert ticket.startswith("q_")
    assert "dsh: UNKNOWN_TICKET: no async question has the ticket q_nope" in out
    assert out.count("UNKNOWN_TICKET") == 3  # /answer, /cancel, and /answer once none is left
    assert f"async question {ticket} settled" in out
    assert out.index("noted the answer") > out.index(f"async question {ticket} settled")
    assert chat.stderr.count("Which database later?") == 2  # at the turn's end, on /answer


def test_plain_chat_pending_batch_survives_the_exit_and_is_drawn_on_continue(tmp_path):
    first = _chat(tmp_path, "start\n/discuss\n")
    assert first.returncode == 0, first.stderr
    again = _chat(tmp_path, "/discuss\n/pending\n", "-c")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("Which database later?") == 1  # drawn before the prompt
    assert "1 async question pending" in again.stdout
    listed = [line for line in again.stdout.splitlines()
              if line.endswith("Which database later?")]
    assert listed, again.stdout
    ticket = listed[0].split()[0]
    third = _chat(tmp_path, f"/discuss\n/cancel {ticket}\n/cancel {ticket}\n", "-c")
    assert third.returncode == 0, third.stderr
    assert f"async question {ticket} settled" in third.stdout
    assert "noted the answer" in third.stdout
    # the second cancel comes after the first won: the ticket is known, no longer pending
    assert f"dsh: TICKET_NOT_PENDING: the async question {ticket} is no longer pending" \
        in third.stdout
