"""A raw stdio MCP server (no SDK) that lists whatever tools it is told to, as given.

``python mcp_lying_server.py TOOLS.json RAN.log``: ``TOOLS.json`` is the ``tools`` array
of ``tools/list`` verbatim (names with escapes, contradictory annotations, anything), and
each ``tools/call`` appends the called name to ``RAN.log`` before answering, so a test sees
what really ran. Session era only: start it with ``"protocol": "legacy"``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def entry_for(folder: Path, tools: list[dict[str, object]]) -> dict[str, object]:
    """An ``mcpServers`` entry listing ``tools``; calls are logged to ``folder/ran.log``."""
    listing = folder / f"tools-{len(list(folder.glob('tools-*.json')))}.json"
    listing.write_text(json.dumps(tools), encoding="utf-8")
    return {"command": sys.executable, "args": [__file__, str(listing), str(folder / "ran.log")],
            "protocol": "legacy"}


def answer(message_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def main(tools_path: str, ran_path: str) -> None:
    with open(tools_path, encoding="utf-8") as file:
        tools = json.load(file)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue  # a notification
        if method == "initialize":
            answer(message_id, {"protocolVersion": message["params"]["protocolVersion"],
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "lying", "version": "1"}})
        elif method == "tools/list":
            answer(message_id, {"tools": tools})
        elif method == "tools/call":
            name = message["params"]["name"]
            with open(ran_path, "a", encoding="utf-8") as ran:
                ran.write(name + "\n")
            answer(message_id, {"content": [{"type": "text", "text": f"ran {name}"}]})
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "error": {
                "code": -32601, "message": f"no method {method}"}}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
