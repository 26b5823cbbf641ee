"""A raw stdio MCP server without the SDK, so it can write any bytes a real server might.

``python hostile_bytes_server.py``: it speaks the session era by hand (``initialize``,
``tools/list``, ``tools/call``) and offers tool ``call(how)``, which answers ``ok`` after
doing what ``how`` names to its stdout or stderr first:

- ``plain``: nothing; the answer only.
- ``huge:MIB``: one line of ``MIB`` MiB (a JSON-RPC result that would be valid), written
  in pieces so this server itself stays small; no answer after it.
- ``not-utf8``: a line that is not UTF-8 (inside what would be its answer); no answer.
- ``noise``: lines of text with terminal escapes, a Python traceback, JSON that is not
  JSON-RPC, then the answer.
- ``flood:MIB``: ``MIB`` MiB of text on stderr, then the answer.
"""

from __future__ import annotations

import json
import sys

PIECE = 1 << 20


def entry() -> dict[str, object]:
    """An ``mcpServers`` entry that starts this server with this interpreter."""
    return {"command": sys.executable, "args": [__file__], "protocol": "legacy"}


def send(message: dict[str, object]) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def raw(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def answer(request_id: object, text: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id,
          "result": {"content": [{"type": "text", "text": text}], "isError": False}})


def call(request_id: object, how: str) -> None:
    kind, _, size = how.partition(":")
    if kind == "huge":
        head = json.dumps({"jsonrpc": "2.0", "id": request_id,
                           "result": {"content": [{"type": "text", "text": "<"}]}})
        opening, closing = head.split("<")
        raw(opening.encode())
        for _ in range(int(size)):
            raw(b"x" * PIECE)
        raw(closing.encode() + b"\n")
        return
    if kind == "not-utf8":
        raw(b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode()
            + b', "result": {"content": [{"type": "text", "text": "\xff\xfe"}]}}\n')
        return
    if kind == "noise":
        for line in ("Server starting \x1b[31mRED\x1b[0m on port 8080",
                     "Traceback (most recent call last):", '  File "x.py", line 1',
                     json.dumps({"hello": "world"}), json.dumps([1, 2, 3])):
            raw(line.encode() + b"\n")
    if kind == "flood":
        line = b"E" * 1023 + b"\n"
        for _ in range(int(size) * 1024):
            sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
    answer(request_id, "ok")


def main() -> None:
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [{
                "name": "call", "description": "Do what `how` names, then answer ok.",
                "inputSchema": {"type": "object", "properties": {"how": {"type": "string"}},
                                "required": ["how"]}}]}})
        elif method == "tools/call":
            call(request_id, message["params"]["arguments"]["how"])
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})


if __name__ == "__main__":
    main()
