"""The hub of desks reads each desk line once, at the edge (``desk/protocol.py``).

The end-to-end desk tests pin what the frames do at a real ``dsh mcp``; this one pins that
the hub decodes every line a desk sends exactly once, whatever its kind (before, a hold
or a decision was decoded two or three times).
"""

from __future__ import annotations

import asyncio
import json

from harness.mcp_util import CEILING, bounded

from dsh_cli.interaction import UserInteraction
from dsh_cli.mcp_server.desk_hub import DeskHub

FRAMES = [
    {"type": "desk/taken", "rpc_id": "marker-taken"},
    {"type": "desk/full", "rpc_id": "marker-full", "message": "full"},
    {"type": "desk/opened", "rpc_id": "marker-opened"},
    {"type": "desk/released", "rpc_id": "marker-released"},
    {"type": "desk/opened", "rpc_id": 7, "marker": "marker-bad"},
    {"type": "question/cancel", "rpc_id": "marker-cancel"},
    {"type": "question/answer", "rpc_id": "marker-answer", "answers": []},
    {"type": "permission/decision", "rpc_id": "marker-decision", "decision": "deny"},
    {"type": "questions/replay", "marker": "marker-replay"},
    {"type": "nope", "marker": "marker-unknown"},
]


def test_every_desk_line_is_decoded_once(monkeypatch):
    decoded: list[str] = []
    loads = json.loads

    def counting(text, *args, **kwargs):
        said = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        if "marker-" in said:
            decoded.append(said)
        return loads(text, *args, **kwargs)

    async def main():
        hub = DeskHub(UserInteraction())
        await hub.start()
        try:
            reader, writer = await asyncio.open_unix_connection(str(hub.path))
            hello = loads(await asyncio.wait_for(reader.readline(), CEILING))
            monkeypatch.setattr(json, "loads", counting)
            for frame in FRAMES:
                writer.write((json.dumps(frame) + "\n").encode())
            # the replies: the bad hold's error, two not-pending acks (the answer and the
            # cancel), the decision's, the unknown kind's error; a replay of nothing and
            # the holds of what is not pending say nothing
            replies = [loads(await asyncio.wait_for(reader.readline(), CEILING))
                       for _ in range(5)]
            writer.close()
            return hello, replies
        finally:
            await hub.close()

    hello, replies = bounded(main())
    assert hello["type"] == "desk/hello"
    assert sorted(reply["type"] for reply in replies) == ["error", "error", "response/ack",
                                                          "response/ack", "response/ack"]
    assert all(reply["accepted"] is False for reply in replies
               if reply["type"] == "response/ack")
    per_line = {frame.get("marker") or frame["rpc_id"]: 0 for frame in FRAMES}
    for text in decoded:
        per_line[loads(text).get("marker") or loads(text)["rpc_id"]] += 1
    assert per_line == dict.fromkeys(per_line, 1)
