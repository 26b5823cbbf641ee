"""A loopback model server that streams whatever bytes a test's generator yields.

    with HostileModel(lambda: (b": ping\\n\\n" for _ in range(100))) as server:
        ... point dsh at server.base_url ...

Unlike ``fakes/openai_server.py`` nothing is built from a reply script: the body is
raw bytes (comments, invalid UTF-8, a gigabyte), sent as a chunked ``text/event-stream``
until the generator ends or the client hangs up. Every generator a test passes is
bounded in count and time, so the server always stops by itself.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HostileModel", "chunk", "finish"]


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    """One SSE event holding a chat-completion chunk with ``delta``."""
    payload = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def finish() -> bytes:
    """The last chunk and ``[DONE]``."""
    return chunk({}, "stop") + b"data: [DONE]\n\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """No access log on the test output."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.owner.requests += 1
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for data in self.server.owner.body():
                if self.server.owner.closing.is_set():
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                self.server.owner.sent += len(data)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.server.owner.hung_up = True
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: HostileModel) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is what these tests expect."""


class HostileModel:
    """The server; ``sent`` counts body bytes written, ``hung_up`` the client's leaving."""

    def __init__(self, body: Callable[[], Iterator[bytes]]) -> None:
        self.body = body
        self.sent = 0
        self.requests = 0
        self.hung_up = False
        self.closing = threading.Event()
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> HostileModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"
