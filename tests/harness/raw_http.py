"""One raw HTTP request with every header as the test gives it (``Host`` too, or none)."""

from __future__ import annotations

import http.client

__all__ = ["raw_request"]


def raw_request(host: str, port: int, method: str, path: str, headers: dict[str, str],
                body: bytes | None = None, *, timeout: float = 10.0,
                ) -> tuple[int, list[tuple[str, str]], bytes]:
    """The status, the headers as sent (in order, repeated ones kept) and the body."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for key, value in headers.items():
            connection.putheader(key, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        connection.close()
