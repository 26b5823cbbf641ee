"""``dsh history`` names how a batch ended: ``discussed`` and ``no desk (NO_PROVIDER)`` are
not ``aborted``, every ``Outcome`` reads back as itself in words and in ``--json``, and an
unknown ``--session`` is no such session."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH
from raw_mcp import agent_session

from dsh_cli.core.events import QuestionRequested, QuestionResolved
from dsh_cli.core.outcomes import Outcome
from dsh_cli.store import SessionStore

WAIT = 60
QUESTIONS = {"questions": [{"id": "db", "question": "Which database?",
                            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}


def dsh(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, *args], input=input, capture_output=True, text=True,
                          timeout=WAIT, stdin=None if input is not None else subprocess.DEVNULL)


def headers() -> list[str]:
    """The first line of each batch in ``dsh history``, without its time and session."""
    shown = dsh("history")
    assert shown.returncode == 0, shown.stderr
    return [line.split("  ", 2)[2] for line in shown.stdout.splitlines()
            if line and not line.startswith(" ")]


def test_a_discussed_batch_reads_discussed(tmp_path):
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": "ask_user_question", "arguments": QUESTIONS}]},
        {"content": "Ask away."}]}))
    chat = dsh("chat", "--plain", "-m", f"script:{model}", input="set it up\n/discuss\n")
    assert chat.returncode == 0, chat.stderr
    assert headers() == [f"script:{model}  discussed"]
    [item] = json.loads(dsh("history", "--json").stdout)
    assert (item["status"], item["code"], item["answer"]) == ("discussed", "ASK_DISCUSS", None)


def test_nobody_to_answer_reads_no_desk_for_an_agent_and_no_one_for_a_run(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    run = dsh("run", "-m", "demo", "--answers", str(empty), "set up")
    assert run.returncode == 0, run.stderr
    agent_session(tmp_path, answers={})  # the agent's batch: nothing at the desk answers it
    assert headers() == ["demo  no one to answer (NO_PROVIDER)",
                         "mcp:clientWeb  no desk (NO_PROVIDER)"]
    assert "aborted" not in dsh("history").stdout


def test_every_outcome_is_stored_as_itself_and_read_back_by_dsh_history():
    """Each ``Outcome`` as the seam records it, read by a real ``dsh history`` child: its
    stored status and code in ``--json``, its word on the batch's line."""
    answer = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    with SessionStore.open() as store:
        session = store.create_session("demo")
        for outcome in Outcome:
            rpc_id = f"q_{outcome.stored}"
            store.question_requested(session, QuestionRequested(
                rpc_id, session, None, QUESTIONS["questions"]))
            answered = outcome is Outcome.ANSWERED
            store.question_resolved(session, QuestionResolved(
                rpc_id, outcome, answer if answered else None,
                "terminal" if answered else None, outcome.code))
    shown = json.loads(dsh("history", "--json").stdout)
    assert [(item["rpc_id"], item["status"], item["code"]) for item in shown] == [
        (f"q_{outcome.stored}", outcome.stored, outcome.code) for outcome in Outcome]
    assert shown[0]["answer"] == answer and shown[0]["answered_by"] == "terminal"
    assert headers() == [f"demo  {outcome.said()}" + (" by terminal" if outcome.code is None
                                                      else "") for outcome in Outcome]


def test_an_unknown_session_is_no_such_session_in_one_line():
    result = dsh("history", "--session", "s_nothing")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == ("dsh: SESSION_NOT_FOUND: session s_nothing does not exist; see "
                             "`dsh sessions list`\n")
