"""Helpers for the web tests: a live host's HTTP client, the batch they ask, a waiter."""

from __future__ import annotations

import asyncio
import http.client
import io
import json
from dataclasses import dataclass, field
from typing import Any

from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction
from dsh_cli.providers.web import WebHost
from dsh_cli.providers.web.app import WebSecrets
from harness.raw_http import raw_request

BATCH = {
    "questions": [
        {"id": "db", "question": "Which database?",
         "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]},
        {"id": "name", "question": "Project name?"},
    ]
}
ANSWERS = [{"id": "db", "selected": ["SQLite"]}, {"id": "name", "selected": [], "custom": "acme"}]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    cookies: list[str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Site:
    """The host under test plus blocking HTTP helpers run off the event loop."""

    host: WebHost
    ui: UserInteraction
    stderr: io.StringIO
    messages: list[str] = field(default_factory=list)

    @property
    def authority(self) -> str:
        return f"127.0.0.1:{self.host.port}"

    @property
    def cookie(self) -> str:
        """The session cookie a browser holds after ``GET /?token=``: derived from the token."""
        return f"dsh_{self.host.port}={cookie_value(self.host.token)}"

    def headers(self, **extra: str) -> dict[str, str]:
        base = {"Host": self.authority, "Cookie": self.cookie}
        base.update({key.replace("_", "-"): value for key, value in extra.items()})
        return base

    def post_headers(self) -> dict[str, str]:
        return self.headers(Origin=f"http://{self.authority}", X_DSH_CSRF=self.host.csrf,
                            Content_Type="application/json")

    def request_sync(self, method: str, path: str, headers: dict[str, str],
                     body: bytes | None = None) -> Reply:
        status, got, content = raw_request("127.0.0.1", self.host.port, method, path, headers,
                                           body)
        cookies = [v for k, v in got if k.lower() == "set-cookie"]
        return Reply(status, {k.lower(): v for k, v in got}, cookies, content)

    async def request(self, method: str, path: str, headers: dict[str, str] | None = None,
                      body: Any = None) -> Reply:
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        return await asyncio.to_thread(self.request_sync, method, path,
                                       self.headers() if headers is None else headers, data)

    async def post(self, path: str, body: Any) -> Reply:
        return await self.request("POST", path, self.post_headers(), body)

    async def events(self, count: int | None = None) -> list[dict[str, Any]]:
        """Open /api/events, read ``count`` events (default: the whole replay), close."""
        return await asyncio.to_thread(self._read_events, count)

    def _read_events(self, count: int | None) -> list[dict[str, Any]]:
        connection = http.client.HTTPConnection("127.0.0.1", self.host.port, timeout=10)
        try:
            connection.putrequest("GET", "/api/events", skip_host=True)
            for key, value in self.headers().items():
                connection.putheader(key, value)
            connection.endheaders()
            response = connection.getresponse()
            assert response.status == 200
            found: list[dict[str, Any]] = []
            kind = None
            while count is None or len(found) < count:
                line = response.fp.readline().decode().rstrip("\r\n")
                if line.startswith("event: "):
                    kind = line[len("event: "):]
                elif line.startswith("data: "):
                    data = json.loads(line[len("data: "):])
                    assert data["type"] == kind
                    found.append(data)
                    if count is None and kind == "replay/done":
                        return found
            return found
        finally:
            connection.close()


def cookie_value(token: str) -> str:
    return WebSecrets(token, "", "", frozenset()).cookie_value


def request(batch: dict[str, Any] | None = None) -> AskUserQuestionRequest:
    return AskUserQuestionRequest.model_validate(batch or BATCH)


async def until(predicate: Any, timeout: float = 5.0) -> None:
    """Wait for a condition the server side reaches asynchronously."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)
