"""A real OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies.

    with FakeOpenAI() as server:
        server.enqueue(Reply.text("Hello", chunk_size=2))
        server.enqueue(Reply.tool_calls([("ask_user_question", {"questions": [...]})]))
        server.enqueue(Reply.error(429, "slow down", headers={"Retry-After": "0.2"}))
        ... point a client at server.base_url ...
        server.requests[0].body["messages"], server.requests[0].headers["authorization"]

It speaks ``POST /v1/chat/completions`` and ``POST /chat/completions``: server-sent events
when the body says ``stream: true`` (chunked, ending in ``data: [DONE]``), one JSON
``chat.completion`` otherwise. Each request takes the next queued reply, else
``server.default`` when set, else a 400 saying the script ran out (a 400, so clients do not
retry it). A reply can be slow (``delay`` before the headers, ``chunk_delay`` between
events) or cut the connection after ``cut_after`` events without ending the chunked body,
which is what a dropped connection looks like to a client.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from fakes.local_http import LocalServer, QuietHandler

__all__ = ["FakeOpenAI", "RecordedRequest", "Reply"]

PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass
class Reply:
    """One scripted response: an error, or an assistant message streamed in pieces."""

    status: int = 200
    content: str = ""
    reasoning: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)  # {id, name, arguments}
    error_body: dict[str, Any] | None = None  # sent as {"error": ...} with ``status``
    headers: dict[str, str] = field(default_factory=dict)
    chunk_size: int | None = None  # characters per text/argument fragment (None: whole)
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    delay: float = 0.0  # seconds before the status line
    chunk_delay: float = 0.0  # seconds between events, once the first piece of text is out
    cut_after: int | None = None  # drop the connection after this many events
    raw_events: list[Any] | None = None  # send these SSE payloads instead (dicts or text)
    html: str | None = None  # answer 200 with this text/html page (a wrong --base-url)

    @classmethod
    def page(cls, html: str) -> Reply:
        """A web page where an API was expected: a login page, a proxy, a docs site."""
        return cls(html=html)

    @classmethod
    def text(cls, content: str, **options: Any) -> Reply:
        return cls(content=content, **options)

    @classmethod
    def tool_calls(cls, calls: list[Any], content: str = "", **options: Any) -> Reply:
        """``calls``: ``(name, arguments[, id])``; arguments a str or any JSON value."""
        normalised = []
        for index, call in enumerate(calls):
            name, arguments, *rest = call
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            normalised.append({"id": rest[0] if rest else f"call_fake_{index}",
                               "name": name, "arguments": arguments})
        return cls(content=content, calls=normalised, **options)

    @classmethod
    def error(cls, status: int, message: str, *, type: str = "invalid_request_error",
              code: str | None = None, **options: Any) -> Reply:
        """An HTTP error with an OpenAI-style ``{"error": {...}}`` body."""
        body = {"message": message, "type": type, "param": None, "code": code}
        return cls(status=status, error_body=body, **options)

    def sse_events(self, model: str, include_usage: bool) -> list[Any]:
        """The ``data:`` payloads of the stream, ``[DONE]`` last."""
        if self.raw_events is not None:
            return list(self.raw_events)
        events: list[dict[str, Any]] = [_chunk(model, {"role": "assistant", "content": ""})]
        for piece in _pieces(self.reasoning, self.chunk_size):
            events.append(_chunk(model, {"reasoning_content": piece}))
        for piece in _pieces(self.content, self.chunk_size):
            events.append(_chunk(model, {"content": piece}))
        for index, call in enumerate(self.calls):
            head = {"index": index, "id": call["id"], "type": "function",
                    "function": {"name": call["name"], "arguments": ""}}
            events.append(_chunk(model, {"tool_calls": [head]}))
            for piece in _pieces(call["arguments"], self.chunk_size):
                events.append(_chunk(model, {"tool_calls": [
                    {"index": index, "function": {"arguments": piece}}]}))
        events.append(_chunk(model, {}, self._finish_reason()))
        if include_usage:
            events.append({**_chunk(model, {}), "choices": [], "usage": self._usage()})
        return [*events, "[DONE]"]

    def completion(self, model: str) -> dict[str, Any]:
        """The non-streaming ``chat.completion`` body."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in self.calls
            ]
        return {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish_reason()}],
            "usage": self._usage(),
        }

    def _finish_reason(self) -> str:
        return self.finish_reason or ("tool_calls" if self.calls else "stop")

    def _usage(self) -> dict[str, int]:
        if self.usage is not None:
            return self.usage
        completion = max(1, (len(self.content) + sum(len(c["arguments"]) for c in self.calls))
                         // 4)
        return {"prompt_tokens": 10, "completion_tokens": completion,
                "total_tokens": 10 + completion}


def _pieces(text: str, size: int | None) -> list[str]:
    if not text:
        return []
    if not size:
        return [text]
    return [text[i:i + size] for i in range(0, len(text), size)]


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


@dataclass(frozen=True)
class RecordedRequest:
    """What a client sent: ``headers`` with lower-case names, ``body`` parsed as JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    received_at: float


class _Server(LocalServer):
    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        super().__init__(_Handler)


class _Handler(QuietHandler):
    server: _Server

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": []})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}",
                                            "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        request = RecordedRequest(
            method="POST", path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body, raw=raw, received_at=time.monotonic(),
        )
        fake._record(request)
        if self.path not in PATHS:
            self._send_json(404, {"error": {"message": f"no route {self.path}",
                                            "type": "invalid_request_error"}})
            return
        reply = fake._next_reply()
        if reply.delay and fake._closing.wait(reply.delay):
            return
        body = body if isinstance(body, dict) else {}
        model = str(body.get("model", "fake-model"))
        if reply.html is not None:
            data = reply.html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif reply.status != 200 or reply.error_body is not None:
            self._send_json(reply.status, {"error": reply.error_body or {}}, reply.headers)
        elif body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(reply, reply.sse_events(model, include_usage))
        else:
            self._send_json(200, reply.completion(model), reply.headers)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Reply, events: list[Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        fake = self.server.fake
        for count, event in enumerate(events):
            if reply.cut_after is not None and count >= reply.cut_after:
                self._cut()
                return
            if count >= 2 and reply.chunk_delay and fake._closing.wait(reply.chunk_delay):
                self._cut()
                return
            payload = event if isinstance(event, str) else json.dumps(event)
            self._write_chunk(f"data: {payload}\n\n".encode())
        if reply.cut_after is not None and reply.cut_after >= len(events):
            self._cut()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _cut(self) -> None:
        """Hang up without the chunked terminator: the body is visibly incomplete."""
        self.close_connection = True
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class FakeOpenAI:
    """The server: ``enqueue`` replies, read ``requests``; a context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque()
        self._closing = threading.Event()
        self.requests: list[RecordedRequest] = []
        self.default: Reply | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeOpenAI:
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started"
        return self._server.server_address[1]

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What a client's ``base_url`` should be (``…/v1``)."""
        return f"{self.root_url}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Replies queued and not yet served."""
        with self._lock:
            return len(self._replies)

    @property
    def bodies(self) -> list[Any]:
        return [request.body for request in self.requests]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        if self.default is not None:
            return self.default
        return Reply.error(400, "fake server: no scripted reply left")
