"""The suite's own rule: nothing in a test process connects beyond loopback."""

from __future__ import annotations

import socket

import pytest


def test_a_connection_beyond_loopback_is_refused_before_any_packet():
    with pytest.raises(OSError, match="only connect to loopback"):
        socket.create_connection(("192.0.2.1", 9), timeout=0.1)  # TEST-NET-1: never routed


def test_loopback_is_allowed():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=1):
            pass
