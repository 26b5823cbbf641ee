"""What a controller sends across a real `dsh run --jsonl` boundary: lone surrogates,
over-long lines, over-long custom text. Each is a real child process and real pipes."""

from __future__ import annotations

import json

import pytest
from relay_peer import Peer, asking, script, stored_tool_results


@pytest.fixture
def peers():
    started: list[Peer] = []

    def start(*args: str, **kwargs) -> Peer:
        started.append(Peer(*args, **kwargs))
        return started[-1]

    yield start
    for peer in started:
        peer.kill()


def _answer(requested: dict, custom: str) -> str:
    return json.dumps({"type": "question/answer", "rpc_id": requested["rpc_id"],
                       "session_id": requested["session_id"],
                       "answers": [{"id": "name", "custom": custom}]})


def test_a_lone_surrogate_in_a_relay_answer_becomes_u_fffd_is_resolved_and_stored(
        peers, tmp_path):
    model = script(tmp_path / "s.json", asking(), {"content": "Done."})
    dsh = peers("run", "--jsonl", "--model", model, "hi")
    requested = dsh.until("question/requested")
    dsh.send(_answer(requested, "ac\ud800me"))  # json.dumps spells it \\ud800: valid JSON
    assert dsh.next() == {"type": "response/ack", "rpc_id": requested["rpc_id"],
                          "accepted": True}
    resolved = dsh.next()
    assert resolved["type"] == "question/resolved" and resolved["outcome"] == "answered"
    assert resolved["answer"]["answers"][0]["custom"] == "ac\ufffdme"
    result = dsh.until("tool/result")
    assert result["error"] is None
    dsh.until("turn/completed")
    assert dsh.finish() == 0
    (stored,) = stored_tool_results(requested["session_id"])
    assert json.loads(stored)["answers"][0]["custom"] == "ac\ufffdme"
