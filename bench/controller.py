"""The controller of a JSON-lines relay: answers each question the moment it reads it.

The relay bench and its floor (a bare echo child) are measured by this one loop, so the two
rates differ only in the peer.
"""

from __future__ import annotations

import json
import subprocess
import time


def control(process: subprocess.Popen[bytes], batches: int, *, more: bool = False) -> float:
    """Answer every batch the moment it is read (``more``: a user/message after each turn
    until ``batches`` are answered); batches per second from the first question on."""
    assert process.stdin is not None and process.stdout is not None
    answered = 0
    started = None
    try:
        for line in process.stdout:
            event = json.loads(line)
            if event["type"] == "question/requested":
                started = started or time.perf_counter()
                frame = {"type": "question/answer", "rpc_id": event["rpc_id"],
                         "session_id": event["session_id"],
                         "answers": [{"id": "q1", "selected": ["yes"]}]}
                process.stdin.write(json.dumps(frame).encode() + b"\n")
                process.stdin.flush()
                answered += 1
            elif event["type"] == "turn/completed":
                if answered >= batches or not more:
                    elapsed = time.perf_counter() - (started or 0)
                    break
                frame = {"type": "user/message", "content": "more"}
                process.stdin.write(json.dumps(frame).encode() + b"\n")
                process.stdin.flush()
            elif event["type"] == "error":
                raise RuntimeError(f"JSON lines: {event}")
        else:
            raise RuntimeError("the JSON-lines peer ended before turn/completed")
    finally:
        process.stdin.close()
        process.wait(30)
    if answered != batches:
        raise RuntimeError(f"answered {answered} of {batches} batches")
    return batches / elapsed
