"""The ACP messages dsh sends, as plain JSON (protocol version 1).

dsh builds its own rather than the SDK's models: the SDK's 1.0 drops them, and a builder
here is one dict. Text from the model or a tool is passed as it is: the client renders it
(an editor's panel, not a terminal), and JSON encoding keeps it inert on the wire.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PERMISSION_OPTIONS", "PROTOCOL_VERSION", "agent_text", "config_options",
           "initialize_result", "permission_request", "thought_text", "tool_call",
           "tool_call_update", "user_text"]

PROTOCOL_VERSION = 1

# optionId -> (name, kind, dsh's decision); the two "always" kinds told apart by id and name
PERMISSION_OPTIONS: dict[str, tuple[str, str, str]] = {
    "allow_once": ("Allow once", "allow_once", "allow_once"),
    "allow_session": ("Allow for this session", "allow_always", "allow_session"),
    "allow_always": ("Always allow", "allow_always", "allow_always"),
    "deny": ("Deny", "reject_once", "deny"),
}


def initialize_result(version: str) -> dict[str, Any]:
    """What dsh does: load stored sessions, text and embedded context in prompts."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {"list": {}, "close": {}},
        },
        "agentInfo": {"name": "dsh", "title": "dsh", "version": version},
        "authMethods": [],
    }


def _chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def agent_text(text: str) -> dict[str, Any]:
    return _chunk("agent_message_chunk", text)


def thought_text(text: str) -> dict[str, Any]:
    return _chunk("agent_thought_chunk", text)


def user_text(text: str) -> dict[str, Any]:
    return _chunk("user_message_chunk", text)


def tool_call(call_id: str, name: str, raw_input: Any, *, kind: str = "other",
              status: str = "pending") -> dict[str, Any]:
    """A tool call as it starts: its name as the title, its arguments as ``rawInput``."""
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": name,
            "kind": kind, "status": status, "rawInput": raw_input}


def tool_call_update(call_id: str, *, status: str | None = None, text: str | None = None,
                     raw_output: Any = None) -> dict[str, Any]:
    """A change to a tool call: its status, and its output as text content."""
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
    if status is not None:
        update["status"] = status
    if text is not None:
        update["content"] = [{"type": "content", "content": {"type": "text", "text": text}}]
    if raw_output is not None:
        update["rawOutput"] = raw_output
    return update


def permission_request(session_id: str, call_id: str | None, title: str,
                       raw_input: Any) -> dict[str, Any]:
    """``session/request_permission``'s params: the call, and dsh's four options."""
    return {
        "sessionId": session_id,
        "toolCall": {"toolCallId": call_id or "", "title": title, "rawInput": raw_input,
                     "status": "pending"},
        "options": [{"optionId": option_id, "name": name, "kind": kind}
                    for option_id, (name, kind, _) in PERMISSION_OPTIONS.items()],
    }


def config_options(model: str, choices: list[str]) -> list[dict[str, Any]]:
    """The session's settings a client may change: the model."""
    values = [model, *(name for name in choices if name != model)]
    return [{"id": "model", "name": "Model", "category": "model", "type": "select",
             "currentValue": model, "options": [{"value": name, "name": name} for name in values]}]
