"""The real Claude Code with ``dsh mcp --hub URL`` as its MCP server: stdio on the agent's
side, forwarded to the hub's ``/mcp`` (a ``dsh mcp --http`` behind its token, the same server
a hub serves, answered at a desk of that server; then a real ``dsh hub serve``, answered at
a human's ``dsh attach --hub`` desk)."""

from __future__ import annotations

import json

from agent_rig import BATCH, JsonlDesk, finish, install_dsh
from harness.dsh_under_test import ROOT
from harness.hub_serve import DshChild, agent_token
from harness.tasks_wire import http_dsh

ANSWER = [{"id": "db", "selected": ["SQLite"]}]
COMPACT = json.dumps({"answers": ANSWER}, separators=(",", ":"))


def test_claude_code_asks_through_the_forwarder_and_reads_the_answer(make_agent, desk,
                                                                      dsh_home):
    from model_server import ModelServer

    with http_dsh("--wait", "60") as url, \
            ModelServer(call=("ask_user_question", BATCH)) as model:
        base, token, _ = url.rsplit("/", 2)
        agent = make_agent("claude", model.url)
        # the agent's entry: `dsh mcp --hub URL`, its token in the entry's environment
        install_dsh("claude", agent.home, agent.project, args=("--hub", base),
                    env={"DSH_HOME": str(dsh_home), "PYTHONPATH": str(ROOT),
                         "DSH_HUB_TOKEN": token})
        entry = json.loads((agent.home / ".claude.json").read_text())["mcpServers"]["dsh"]
        assert entry["args"][-2:] == ["--hub", base] and token not in entry["args"]
        process = agent.start("Ask me which database to use.")
        requested = desk.event("question/requested", process)
        desk.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                   "session_id": requested["session_id"], "answers": ANSWER})
        status, _, err = finish(process)
    assert status == 0, err
    # the agent's own initialize reached the server through the forwarder
    assert requested["source"]["client"] in {"claude-code", "Claude Code"}
    assert requested["questions"][0]["question"] == "Which database?"
    assert any(COMPACT in result for result in model.results()), model.results()


def test_claude_code_asks_through_a_real_hub_and_a_human_answers_at_its_desk(
        make_agent, dsh_home, tmp_path):
    from model_server import ModelServer

    store = str(tmp_path / "hub.db")
    token, human = agent_token(store, "laptop-7"), agent_token(store, "alice", "human")
    hub = DshChild("hub", "serve", "--store", store, "--port", "0")
    desk = None
    try:
        url = hub.said("dsh: hub http://")
        desk = JsonlDesk(dsh_home, "--hub", url, env={"DSH_HUB_TOKEN": human})
        with ModelServer(call=("ask_user_question", BATCH)) as model:
            agent = make_agent("claude", model.url)
            install_dsh("claude", agent.home, agent.project, args=("--hub", url),
                        env={"DSH_HOME": str(dsh_home), "PYTHONPATH": str(ROOT),
                             "DSH_HUB_TOKEN": token})
            process = agent.start("Ask me which database to use.")
            requested = desk.event("question/requested", process)
            desk.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                       "session_id": requested["session_id"], "answers": ANSWER})
            acked = desk.event("response/ack", process)
            status, _, err = finish(process)
        assert status == 0, err
        assert acked["accepted"] is True
        # who asks: the agent's own initialize through the forwarder, its token, its cwd
        assert requested["source"]["client"] in {"claude-code", "Claude Code"}
        assert requested["source"]["token"] == "laptop-7"
        assert requested["source"]["cwd"] == str(agent.project)
        assert any(COMPACT in result for result in model.results()), model.results()
    finally:
        if desk is not None:
            desk.close()
        hub.stop()
