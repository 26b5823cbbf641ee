"""The README's "Agents on another machine": ``dsh mcp --http`` on the human's side, reached
through ``ssh -R PORT:127.0.0.1:PORT``; here a plain TCP forwarder on 127.0.0.1 stands in
for ssh, and the agent side is the official SDK's Streamable HTTP client."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest
from agent_rig import BATCH, JsonlDesk
from harness.dsh_under_test import DSH

ANSWER = [{"id": "db", "selected": ["SQLite"]}]


class Forwarder:
    """What ``ssh -R`` is to the agent's host: a listener whose connections are piped,
    byte for byte, to the human's ``dsh mcp --http``; ``carried`` counts the bytes."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.carried = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                near, _ = self._server.accept()
            except OSError:
                return
            far = socket.create_connection(("127.0.0.1", self.target_port))
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        with source:
            while data := _recv(source):
                self.carried += len(data)
                try:
                    sink.sendall(data)
                except OSError:  # the other side closed first: the tunnel is done
                    return
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self) -> None:
        self._server.close()


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


@pytest.fixture
def human_side(dsh_home):
    """The human's machine: a desk, and ``dsh mcp --http`` whose URL it printed."""
    env = {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"}
    desk = JsonlDesk(dsh_home)
    server = subprocess.Popen([DSH, "mcp", "--http", "--wait", "20"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        yield desk, line.split()[-1]
    finally:
        server.terminate()
        server.wait(timeout=30)
        desk.close()


def _through(forwarder: Forwarder):
    """An HTTP client of the agent's host: the URL is the one dsh printed (127.0.0.1:PORT,
    which on that host is ssh's listener), the connection goes to the forwarder."""
    import httpx2

    class Tunnel(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request):
            request.url = request.url.copy_with(port=forwarder.port)  # Host stays PORT
            return await self._inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self._inner.aclose()

    return httpx2.AsyncClient(transport=Tunnel(), timeout=30)


def test_an_agent_on_another_host_asks_the_desk_through_the_tunnel(human_side):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    desk, url = human_side
    forwarder = Forwarder(urlsplit(url).port or 0)

    async def main():
        async with _through(forwarder) as http, \
                Client(streamable_http_client(url, http_client=http)) as agent:
            call = asyncio.ensure_future(agent.call_tool("ask_user_question", BATCH))
            requested = await asyncio.to_thread(desk.event, "question/requested")
            desk.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                       "session_id": requested["session_id"], "answers": ANSWER})
            return requested, await call

    try:
        requested, result = asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        forwarder.close()
    assert requested["questions"][0]["question"] == "Which database?"
    assert result.structured_content == {"answers": ANSWER}
    assert forwarder.carried > 0  # the call went through the tunnel, not around it


def test_a_tunnel_to_another_port_number_is_refused_by_the_host_check(human_side):
    """``ssh -R 9000:127.0.0.1:PORT`` makes the agent send ``Host: 127.0.0.1:9000``, which
    dsh refuses (DNS-rebinding rule): the recipe keeps the same port on both ends."""
    _, url = human_side
    forwarder = Forwarder(urlsplit(url).port or 0)
    moved = url.replace(f":{urlsplit(url).port}/", f":{forwarder.port}/")
    request = urllib.request.Request(moved, data=b"{}", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    finally:
        forwarder.close()
    assert status == 421
    assert forwarder.carried > 0
