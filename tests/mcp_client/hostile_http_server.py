"""A raw Streamable HTTP MCP server without the SDK, so its bodies can be any size or shape.

``python hostile_http_server.py``: listens on 127.0.0.1 (a free port, printed as the first
line of stdout) at ``/mcp``, speaks the session era by hand and offers tool ``call(how)``:

- ``plain``: a JSON body answering ``ok``.
- ``json:MIB``: a JSON body answering a text of ``MIB`` MiB, written in pieces.
- ``sse:MIB``: the same answer as the one event of an event stream.
- ``gzip``: a small JSON answer, compressed although the client asked for identity.
"""

from __future__ import annotations

import gzip
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PIECE = 1 << 20


def entry(port: int) -> dict[str, object]:
    """An ``mcpServers`` entry for this server on ``port``."""
    return {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "protocol": "legacy"}


def result(request_id: object, text: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id,
            "result": {"content": [{"type": "text", "text": text}], "isError": False}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # no stream of server-sent requests
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:  # a notification
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if method == "initialize":
            self.json({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}}})
        elif method == "tools/list":
            self.json({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [{
                "name": "call", "description": "Answer as `how` names.",
                "inputSchema": {"type": "object", "properties": {"how": {"type": "string"}},
                                "required": ["how"]}}]}})
        elif method == "tools/call":
            self.call(request_id, message["params"]["arguments"]["how"])
        else:
            self.json({"jsonrpc": "2.0", "id": request_id, "result": {}})

    def json(self, message: dict[str, object]) -> None:
        body = json.dumps(message).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def call(self, request_id: object, how: str) -> None:
        kind, _, size = how.partition(":")
        if kind == "gzip":
            body = gzip.compress(json.dumps(result(request_id, "ok")).encode())
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if kind not in ("json", "sse"):
            self.json(result(request_id, "ok"))
            return
        opening, closing = (part.encode() for part in
                            json.dumps(result(request_id, "<")).split("<"))
        if kind == "sse":
            opening, closing = b"event: message\ndata: " + opening, closing + b"\n\n"
        self.send_response(200)
        self.send_header("Content-Type",
                         "application/json" if kind == "json" else "text/event-stream")
        self.send_header("Content-Length",
                         str(len(opening) + int(size) * PIECE + len(closing)))
        self.end_headers()
        try:
            self.wfile.write(opening)
            for _ in range(int(size)):
                self.wfile.write(b"x" * PIECE)
            self.wfile.write(closing)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what is being tested


class Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that stops reading a body is what the tests do


def main() -> None:
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
