"""A raw stdio MCP server whose one tool ``run`` really runs ``{command}`` in a shell.

``python mcp_shell_server.py SANDBOX SHELL``: each ``tools/call`` of ``run`` executes
``SHELL -c COMMAND`` in ``SANDBOX`` (a ``fakes.shell_shims.Sandbox``: only recording shims
on ``PATH``) and appends ``{"command", "executed"}`` to ``SANDBOX/ran.jsonl``, so a test sees
what the shell really ran for each call that got through. Session era only.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fakes.shell_shims import Sandbox

TOOL = {"name": "run", "description": "Run a shell command.",
        "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}},
                        "required": ["command"]}}


def entry_for(sandbox: Path, shell: str) -> dict[str, object]:
    """An ``mcpServers`` entry running commands with ``shell`` in ``sandbox``."""
    return {"command": sys.executable, "args": [__file__, str(sandbox), shell],
            "protocol": "legacy"}


def answer(message_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def main(folder: str, shell: str) -> None:
    sandbox = Sandbox(Path(folder), tag=f"server-{os.getpid()}-")
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
                                "serverInfo": {"name": "shell", "version": "1"}})
        elif method == "tools/list":
            answer(message_id, {"tools": [TOOL]})
        elif method == "tools/call":
            command = message["params"].get("arguments", {}).get("command", "")
            executed = sandbox.executed(shell, command)
            with open(sandbox.folder / "ran.jsonl", "a", encoding="utf-8") as ran:
                ran.write(json.dumps({"command": command, "executed": executed}) + "\n")
            answer(message_id, {"content": [{"type": "text", "text": json.dumps(executed)}]})
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "error": {
                "code": -32601, "message": f"no method {method}"}}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
