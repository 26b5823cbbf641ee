"""`dsh ask --jsonl` belongs to no session: an answer naming one is `wrong-session`."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH


def test_ask_jsonl_has_a_null_session_and_refuses_an_answer_naming_another():
    process = subprocess.Popen([DSH, "ask", "--jsonl", "-q", "Deploy?", "-o", "yes", "-o", "no"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdin is not None
        requested = json.loads(process.stdout.readline())
        assert requested["type"] == "question/requested"
        assert "session_id" in requested and requested["session_id"] is None
        frame = {"type": "question/answer", "rpc_id": requested["rpc_id"],
                 "answers": [{"id": "q1", "selected": ["no"]}]}
        frames = [{**frame, "session_id": "s_other"}, {**frame, "session_id": None}]
        out, err = process.communicate("".join(json.dumps(f) + "\n" for f in frames),
                                       timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    events = [json.loads(line) for line in out.splitlines()]
    acks = [event for event in events if event["type"] == "response/ack"]
    assert acks[0]["accepted"] is False and acks[0]["reason"] == "wrong-session"
    assert acks[1]["accepted"] is True
    assert events[-1]["outcome"] == "answered"
    assert process.returncode == 0, err
