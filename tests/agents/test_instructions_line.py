"""The real agents read the line ``dsh mcp install --instructions`` writes, and the "try it"
command install prints makes each ask a question at the desk.

The scripted model of ``model_server.py`` decides what the agent calls, so what is shown here
is the agent's side: that the instructions file install chose is the one the agent sends its
model (the line is in the model's request), and that the printed command, run as written
with the agent's program, reaches ``dsh attach``.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from agent_rig import AGENTS, BATCH, finish
from harness.dsh_under_test import DSH
from model_server import ModelServer

MARKER = "`ask_user_question` tool of the `dsh` MCP server"


@pytest.mark.parametrize("name", AGENTS)
def test_the_instructions_line_reaches_the_model_and_try_it_asks_at_the_desk(name, make_agent,
                                                                            desk):
    with ModelServer(call=("ask_user_question", BATCH)) as model:
        agent = make_agent(name, model.url)
        agent.install("--wait", "20")
        env = {key: value for key, value in os.environ.items()
               if key not in ("XDG_CONFIG_HOME", "DSH_HOME")}
        env.update(HOME=str(agent.home), DSH_HOME=str(agent.dsh_home),
                   PATH=os.pathsep.join([str(Path(agent.program).parent), env["PATH"]]))
        done = subprocess.run([DSH, "mcp", "install", name, "--instructions"], cwd=agent.project,
                              env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        (trial,) = [line for line in done.stdout.splitlines() if line.startswith("try it")]
        argv = shlex.split(trial.split(": ", 1)[1])
        assert argv[0] == Path(agent.program).name
        process = subprocess.Popen([agent.program, *argv[1:]], cwd=agent.project,
                                   env=agent.env(), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        requested = desk.event("question/requested", process)
        desk.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                   "session_id": requested["session_id"],
                   "answers": [{"id": "db", "selected": ["SQLite"]}]})
        status, _, err = finish(process)
    assert status == 0, err
    first = json.dumps(model.turns[0].body, ensure_ascii=False)
    assert MARKER in first, f"{name} did not send its model the instructions line"
    assert "which colour the logo should be" in first  # the try-it prompt
