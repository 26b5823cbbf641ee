"""Raw JSON-RPC to ``dsh mcp`` for its MCP tasks (the SDK's client has no task support).

``HttpDsh`` is ``dsh mcp --http ARGS`` as a child, with a 2025-11-25 session (``Wire2025``)
or the 2026-07-28 wire (``Wire2026``, no session, the tasks extension in every ``_meta``);
``StdioDsh`` is ``dsh mcp ARGS`` over pipes, its notifications kept as they come.
"""

from __future__ import annotations

import http.client
import itertools
import json
import subprocess
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH

EXTENSION = "io.modelcontextprotocol/tasks"
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
_ids = itertools.count(1)


def ask_call(task: dict[str, Any] | None = None, *, delivery: str = "async") -> dict[str, Any]:
    """``tools/call`` params of ``ask_user_question`` (a 2025-11-25 ``task`` with ``task``);
    async by default, since only a question that does not wait becomes a task."""
    arguments = BATCH if delivery == "wait" else {**BATCH, "delivery": delivery}
    params: dict[str, Any] = {"name": "ask_user_question", "arguments": arguments}
    if task is not None:
        params["task"] = task
    return params


def post(url: str, message: dict[str, Any], headers: dict[str, str] | None = None,
         timeout: float = 20.0) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
    """One POST on a connection of its own: status, headers, the JSON-RPC messages back."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request("POST", parts.path, json.dumps(message), {**ACCEPT, **(headers or {})})
        response = connection.getresponse()
        body = response.read().decode()
    finally:
        connection.close()
    found = {key.lower(): value for key, value in response.getheaders()}
    if "text/event-stream" in found.get("content-type", ""):
        messages = [json.loads(line[5:]) for line in body.splitlines()
                    if line.startswith("data:") and line[5:].strip()]
    else:
        messages = [json.loads(body)] if body.strip() else []
    return response.status, found, messages


def reply(messages: list[dict[str, Any]], request_id: int) -> dict[str, Any]:
    """The response to ``request_id`` among ``messages``."""
    return next(message for message in messages if message.get("id") == request_id)


class Wire2025:
    """A 2025-11-25 session of ``dsh mcp --http`` (or a hub's ``/mcp``: ``sent``, headers
    every request carries, such as its agent token)."""

    def __init__(self, url: str, sent: dict[str, str] | None = None) -> None:
        self.url = url
        self.sent = sent or {}
        request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "tasks-test", "version": "1.0"}}}
        status, headers, messages = post(url, request, {
            **self.sent, "MCP-Protocol-Version": "2025-11-25"})
        assert status == 200, (status, messages)
        self.initialized = reply(messages, 0)["result"]
        self.session = headers["mcp-session-id"]
        post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers())

    def headers(self) -> dict[str, str]:
        return {**self.sent, "Mcp-Session-Id": self.session,
                "MCP-Protocol-Version": "2025-11-25"}

    def request(self, method: str, params: dict[str, Any] | None = None,
                timeout: float = 20.0) -> dict[str, Any]:
        """The response (``result`` or ``error``) to one request of this session."""
        request_id = next(_ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        status, _, messages = post(self.url, message, self.headers(), timeout)
        assert messages, status
        return reply(messages, request_id)


class Wire2026:
    """The 2026-07-28 wire of ``dsh mcp --http``: every request on its own, ``_meta`` in it."""

    def __init__(self, url: str, *, tasks: bool = True) -> None:
        self.url = url
        self.capabilities: dict[str, Any] = {"extensions": {EXTENSION: {}}} if tasks else {}

    def message(self, method: str, params: dict[str, Any] | None = None,
                ) -> tuple[dict[str, Any], dict[str, str]]:
        """A request of this wire, ``_meta`` in it, and its routing headers."""
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1.0"},
                "io.modelcontextprotocol/clientCapabilities": self.capabilities}
        params = {**(params or {}), "_meta": meta}
        routing = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
        name = params.get("taskId", params.get("name"))
        if isinstance(name, str):
            routing["Mcp-Name"] = name
        message = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
        return message, routing

    def request(self, method: str, params: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> dict[str, Any]:
        message, routing = self.message(method, params)
        status, _, messages = post(self.url, message, {**routing, **(headers or {})})
        assert messages, status
        return reply(messages, message["id"])


class Listener:
    """A 2026 ``subscriptions/listen`` stream, read frame by frame as it comes."""

    def __init__(self, wire: Wire2026, notifications: dict[str, Any],
                 headers: dict[str, str] | None = None) -> None:
        message, routing = wire.message("subscriptions/listen",
                                        {"notifications": notifications})
        self.id = message["id"]
        parts = urlsplit(wire.url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        self.connection.request("POST", parts.path, json.dumps(message),
                                {**ACCEPT, **routing, **(headers or {})})
        self.response = self.connection.getresponse()
        # a refused listen is a plain JSON error response, not a stream
        self.refused = None if self.response.status == 200 else json.loads(self.response.read())

    def next(self) -> dict[str, Any]:
        """The next JSON-RPC message on the stream (or the refusal)."""
        if self.refused is not None:
            return self.refused
        while True:
            line = self.response.readline().decode()
            assert line, "the listen stream ended"
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:])

    def close(self) -> None:
        self.connection.close()


@contextmanager
def http_dsh(*args: str, env: dict[str, str] | None = None):
    """``dsh mcp --http ARGS`` running (in ``env``, else the test's); yields its URL (with
    the token)."""
    process = subprocess.Popen([DSH, "mcp", "--http", *args], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
    try:
        line = process.stderr.readline()
        assert line.startswith("dsh: mcp http://127.0.0.1:"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=30)


class StdioDsh:
    """``dsh mcp ARGS`` over pipes, spoken to in raw JSON-RPC lines."""

    def __init__(self, *args: str, stderr: int | None = None, cwd: str | None = None) -> None:
        self.process = subprocess.Popen([DSH, "mcp", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr, text=True,
                                        cwd=cwd)
        self.notifications: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(_ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.until(lambda message: message.get("id") == request_id)

    def notification(self, method: str) -> dict[str, Any]:
        """The first ``method`` notification, whether it came already or is still to come."""
        for message in self.notifications:
            if message.get("method") == method:
                return message
        return self.until(lambda message: message.get("method") == method)

    def until(self, wanted) -> dict[str, Any]:
        """Read messages until one is ``wanted`` (notifications are kept on the way)."""
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            assert line, "dsh mcp ended"
            message = json.loads(line)
            if "id" not in message:
                self.notifications.append(message)
            if wanted(message):
                return message

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)
