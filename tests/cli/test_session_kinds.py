"""Chats and agents' ``dsh mcp`` sessions told apart: ``-c`` continues a chat, never an agent's
session; ``dsh sessions list`` and ``/sessions`` name the kind, the agent and where it ran."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.dsh_under_test import DSH
from raw_mcp import agent_session

WAIT = 30
DEMO_ANSWERS = {"stack": ["Go + chi"], "features": ["CI"], "name": "acme"}


def dsh(*args: str, input: str | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=WAIT, cwd=cwd,
                          stdin=None if input is not None else subprocess.DEVNULL)


def answers(tmp_path: Path, content: dict) -> str:
    path = tmp_path / f"answers-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(content))
    return str(path)


def listed(*args: str) -> list[dict]:
    result = dsh("sessions", "list", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_continue_takes_the_latest_chat_never_an_agents_session(tmp_path):
    chat = dsh("run", "-m", "demo", "--answers", answers(tmp_path, DEMO_ANSWERS), "set up")
    assert chat.returncode == 0, chat.stderr
    [chat_id] = [s["id"] for s in listed()]
    agent_session(tmp_path)  # the newest session is the agent's
    assert [s["kind"] for s in listed()] == ["agent", "chat"]
    # no key set, no -m: the chat goes on with the model it was started with (demo)
    again = dsh("run", "-c", "--answers", answers(tmp_path, DEMO_ANSWERS), "go on")
    assert again.returncode == 0, again.stderr
    assert "MISSING_API_KEY" not in again.stderr and "mcp:" not in again.stderr
    shown = json.loads(dsh("sessions", "show", "--json", chat_id).stdout)
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"][-1] == "go on"
    plain = dsh("chat", "--plain", "-c", input="/exit\n")
    assert plain.returncode == 0, plain.stderr
    assert f"dsh · resumed session {chat_id}" in plain.stdout
    assert "MISSING_API_KEY" not in plain.stderr


def test_an_agents_session_is_refused_as_a_chat_in_one_line(tmp_path):
    agent_session(tmp_path)
    [agent] = listed()
    for command in (["run", "-r", agent["id"], "more"], ["chat", "--plain", "-r", agent["id"]]):
        result = dsh(*command, input="")
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr == (
            f"dsh: NOTHING_TO_RESUME: session {agent['id']} holds the questions clientWeb "
            "asked through `dsh mcp`, not a chat to continue; `dsh sessions show "
            f"{agent['id']}` shows them\n"), command
    # with only an agent's session stored, -c has no chat to continue, and says it once
    alone = dsh("chat", "--plain", "-c", input="")
    assert alone.returncode == 2
    assert alone.stderr == ("dsh: NOTHING_TO_RESUME: there is no chat to continue yet: start "
                            "one with `dsh` or `dsh run PROMPT`, then continue it with -c\n")
    # /resume in a chat refuses it too, and the chat goes on with its own session
    chat = dsh("chat", "--plain", "-m", "demo", input=f"/resume {agent['id']}\n/exit\n")
    assert chat.returncode == 0, chat.stderr
    assert "NOTHING_TO_RESUME: session" in chat.stdout + chat.stderr
    assert "resumed session" not in chat.stdout


def test_sessions_list_names_the_kind_the_agent_and_where_it_ran(tmp_path):
    chat = dsh("run", "-m", "demo", "--answers", answers(tmp_path, DEMO_ANSWERS), "set up")
    assert chat.returncode == 0, chat.stderr
    where = agent_session(tmp_path)
    [agent, chat_row] = listed()
    assert (agent["kind"], agent["agent"], agent["cwd"]) == ("agent", "clientWeb", str(where))
    assert agent["title"] == "Which database for the agent?"  # not "(untitled)"
    assert (chat_row["kind"], chat_row["agent"]) == ("chat", None)
    assert [s["id"] for s in listed("--kind", "agent")] == [agent["id"]]
    assert [s["id"] for s in listed("--kind", "chat")] == [chat_row["id"]]
    table = dsh("sessions", "list").stdout.splitlines()
    assert table[0].split() == ["ID", "UPDATED", "KIND", "MODEL/AGENT", "TITLE"]
    agent_line = next(line for line in table if line.startswith(agent["id"]))
    assert f"  agent  clientWeb in {where}  " in agent_line
    assert agent_line.endswith("Which database for the agent?")
    assert "(untitled)" not in "\n".join(table)
    chat_line = next(line for line in table if line.startswith(chat_row["id"]))
    assert "  chat   demo " in chat_line
    only_chats = dsh("sessions", "list", "--kind", "chat").stdout
    assert agent["id"] not in only_chats and chat_row["id"] in only_chats
    # the chat's /sessions says the same
    slash = dsh("chat", "--plain", "-m", "demo", input="/sessions\n/exit\n")
    assert slash.returncode == 0, slash.stderr
    line = next(line for line in slash.stdout.splitlines() if agent["id"] in line)
    assert f"agent  clientWeb in {where}  Which database for the agent?" in line
