"""The HTTP server the fakes run on 127.0.0.1: threaded, quiet, and calm about a client that
hangs up (an agent exiting, a timeout, a cancelled stream), which these tests expect."""

from __future__ import annotations

import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LocalServer", "QuietHandler"]


class LocalServer(ThreadingHTTPServer):
    """A server on a free port of 127.0.0.1 whose threads never hold up the test's exit."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is expected; anything else is reported as usual."""
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 with no access log; small server-sent events go out at once."""

    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Small SSE writes must not wait for Nagle and the client's delayed ACK (~40 ms).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        """No access log on the test output."""
