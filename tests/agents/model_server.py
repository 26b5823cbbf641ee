"""A scripted model on 127.0.0.1 that speaks the three APIs the real agents call.

    with ModelServer(call=("ask_user_question", BATCH)) as model:
        ... run claude with ANTHROPIC_BASE_URL=model.url, codex with a provider whose
        base_url is model.url + "/v1", gemini with GOOGLE_GEMINI_BASE_URL=model.url ...
        model.offered()        # every tool name the agent offered, in any request
        model.results()        # the tool results the agent sent back, as text

- Anthropic Messages (Claude Code): ``POST /v1/messages`` answered as server-sent events
  (``message_start`` … ``message_stop``); ``/v1/messages/count_tokens`` gets a count.
- OpenAI Responses (Codex): ``POST /v1/responses`` answered as server-sent events
  (``response.created``, ``response.output_item.done``, ``response.completed``).
- Gemini API (Gemini CLI): ``POST /v1beta/models/M:streamGenerateContent?alt=sse`` as
  ``data:`` events, ``:generateContent`` as one JSON body, ``:countTokens`` a count.

The script is one rule, the same for every API: a request that carries a tool result gets
the text ``done``; a request that offers a tool whose name ends with ``call[0]`` gets a call
of that tool with ``call[1]`` as arguments; any other request (titles, routing, summaries
the agents ask for on the side) gets the text ``ok``. With ``then``, a request carrying tool
results gets instead the call ``then(results)`` returns (a second tool, its arguments made
from the first result), and ``done`` once it returns None.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fakes.local_http import LocalServer, QuietHandler

__all__ = ["ModelServer", "Turn"]


@dataclass(frozen=True)
class Turn:
    """One request as the model saw it: the API, the tools offered, the results returned."""

    api: str
    path: str
    tools: list[str]
    results: list[str]
    body: Any
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)  # name: (ns, tool)
    at: float = field(default_factory=time.monotonic)


class ModelServer:
    """The scripted model; ``turns`` records every request, in order."""

    def __init__(self, call: tuple[str, dict[str, Any]], *,
                 then: Callable[[list[str]], tuple[str, dict[str, Any]] | None] | None = None,
                 ) -> None:
        self.call = call
        self.then = then
        self.turns: list[Turn] = []
        self.seen: list[tuple[float, str, str]] = []  # (time, method, path) of every request
        self._lock = threading.Lock()
        self._server = _Server(self)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def offered(self) -> set[str]:
        """Every tool name offered in any request."""
        with self._lock:
            return {name for turn in self.turns for name in turn.tools}

    def results(self) -> list[str]:
        """The text of every tool result the agent sent back, first seen first."""
        with self._lock:
            seen: list[str] = []
            for turn in self.turns:
                seen.extend(r for r in turn.results if r not in seen)
            return seen

    def decide(self, turn: Turn) -> tuple[str, Any]:
        """``("text", str)`` or ``("call", ((namespace, name), arguments))`` for this request."""
        with self._lock:
            self.turns.append(turn)
        call: tuple[str, dict[str, Any]] | None = self.call
        if turn.results:
            call = self.then(turn.results) if self.then is not None else None
            if call is None:
                return "text", "done"
        assert call is not None
        suffix, arguments = call
        for name in turn.tools:
            if name == suffix or name.endswith("_" + suffix):
                # a fresh id for each call of a conversation (1 for the first)
                number = len(turn.results) + 1
                return "call", (turn.namespaced.get(name, (None, name)), arguments, number)
        return "text", "ok"


def _tool_names(tools: Any) -> list[str]:
    """Tool names, Gemini's ``functionDeclarations`` included (namespaces: ``_namespaced``)."""
    names: list[str] = []
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("name"), str) and tool.get("type") != "namespace":
            names.append(tool["name"])
        names.extend(_tool_names(tool.get("functionDeclarations")))
    return [*names, *_namespaced(tools)]


def _namespaced(tools: Any) -> dict[str, tuple[str, str]]:
    """Responses API namespaces (Codex puts a server's tools in ``mcp__SERVER``): each
    tool by its full name ``NAMESPACE__TOOL``, with the two parts a call must name."""
    found: dict[str, tuple[str, str]] = {}
    for tool in tools or []:
        if isinstance(tool, dict) and tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    found[f"{tool['name']}__{inner['name']}"] = (tool["name"], inner["name"])
    return found


def _text_of(value: Any) -> str:
    """A tool result's text: strings as they are, text blocks joined, other JSON dumped."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text_of(part.get("text", part)) if isinstance(part, dict)
                       else _text_of(part) for part in value)
    return json.dumps(value)


def _anthropic_turn(path: str, body: dict[str, Any]) -> Turn:
    results = [_text_of(block.get("content", ""))
               for message in body.get("messages", []) if isinstance(message, dict)
               for block in (message.get("content") if isinstance(message.get("content"), list)
                             else [])
               if isinstance(block, dict) and block.get("type") == "tool_result"]
    return Turn("anthropic", path, _tool_names(body.get("tools")), results, body)


def _responses_turn(path: str, body: dict[str, Any]) -> Turn:
    items = body.get("input") if isinstance(body.get("input"), list) else []
    results = [_text_of(item.get("output", "")) for item in items
               if isinstance(item, dict) and item.get("type") == "function_call_output"]
    tools = body.get("tools")
    return Turn("responses", path, _tool_names(tools), results, body, _namespaced(tools))


def _gemini_turn(path: str, body: dict[str, Any]) -> Turn:
    # Gemini CLI sends a tool's text as {"output": TEXT}, anything else as it is.
    results = [_text_of(part["functionResponse"].get("response", {}).get("output")
                        or part["functionResponse"].get("response", {}))
               for content in body.get("contents", []) if isinstance(content, dict)
               for part in content.get("parts", []) or []
               if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)]
    return Turn("gemini", path, _tool_names(body.get("tools")), results, body)


def _anthropic_events(model: str, decision: tuple[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    kind, value = decision
    usage = {"input_tokens": 10, "output_tokens": 5}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {
        "type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    if kind == "call":
        (_, name), arguments, number = value
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "tool_use",
                                                       "id": f"toolu_fake_{number}",
                                                       "name": name, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "input_json_delta",
                                               "partial_json": json.dumps(arguments)}}),
        ]
        stop = "tool_use"
    else:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": value}}),
        ]
        stop = "end_turn"
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def _responses_events(decision: tuple[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    kind, value = decision
    if kind == "call":
        (namespace, name), arguments, number = value
        item: dict[str, Any] = {"type": "function_call", "id": f"fc_fake_{number}",
                                "call_id": f"call_fake_{number}", "name": name,
                                "arguments": json.dumps(arguments)}
        if namespace:
            item["namespace"] = namespace
    else:
        item = {"type": "message", "role": "assistant", "id": "msg_fake_1",
                "content": [{"type": "output_text", "text": value, "annotations": []}]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    return [
        ("response.created", {"type": "response.created", "response": {"id": "resp_fake"}}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": {"id": "resp_fake", "usage": usage}}),
    ]


def _gemini_body(decision: tuple[str, Any]) -> dict[str, Any]:
    kind, value = decision
    if kind == "call":
        (_, name), arguments, _number = value
        part: dict[str, Any] = {"functionCall": {"name": name, "args": arguments}}
    else:
        part = {"text": value}
    return {"candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": "fake"}


class _Server(LocalServer):
    def __init__(self, model: ModelServer) -> None:
        self.model = model
        super().__init__(_Handler)


class _Handler(QuietHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.model.seen.append((time.monotonic(), "GET", self.path))
        # Model lists and health checks: an empty list satisfies each agent's parser.
        self._json(200, {"object": "list", "data": [], "models": []})

    def do_POST(self) -> None:
        self.server.model.seen.append((time.monotonic(), "POST", self.path))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if "gzip" in (self.headers.get("Content-Encoding") or ""):
            import gzip

            raw = gzip.decompress(raw)
        elif "zstd" in (self.headers.get("Content-Encoding") or ""):
            self._json(415, {"error": {"message": "send the body uncompressed"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "the body is not JSON"}})
            return
        path = urlsplit(self.path).path
        model = self.server.model
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 10})
        elif path.endswith("/messages"):
            decision = model.decide(_anthropic_turn(path, body))
            self._sse(_anthropic_events(str(body.get("model", "fake")), decision), named=True)
        elif path.endswith("/responses"):
            self._sse(_responses_events(model.decide(_responses_turn(path, body))), named=True)
        elif path.endswith(":countTokens"):
            self._json(200, {"totalTokens": 10})
        elif path.endswith(":streamGenerateContent"):
            decision = model.decide(_gemini_turn(path, body))
            self._sse([("", _gemini_body(decision))], named=False)
        elif path.endswith(":generateContent"):
            self._json(200, _gemini_body(model.decide(_gemini_turn(path, body))))
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str, dict[str, Any]]], *, named: bool) -> None:
        lines = []
        for name, data in events:
            head = f"event: {name}\n" if named else ""
            lines.append(f"{head}data: {json.dumps(data)}\n\n")
        data = "".join(lines).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
