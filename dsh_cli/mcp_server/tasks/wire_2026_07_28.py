"""The 2026-07-28 tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``).

A client that names the extension in a request's ``_meta`` client capabilities may get a
task back from ``tools/call`` (``resultType: "task"``, the task's fields flat); the server
decides, and dsh makes one only of a question asked with ``delivery: "async"``: a question
that waits, and ``approve_tool_use``, hold the call until the human answers, as they do for
any client. ``tasks/get`` inlines the result (or error); ``tasks/update`` and ``tasks/cancel``
answer an empty ``resultType: "complete"``; ``tasks/result`` and ``tasks/list`` do not exist.
A request that does not name the extension gets ``-32021`` from every ``tasks/*`` method.
dsh's tools never ask the client for input, so no task is ever ``input_required``
(``inputRequests`` stays empty and ``tasks/update``'s responses are ignored, as the
extension says of responses to no outstanding request): a question waits for the human
as ``working``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_cli.mcp_server.owned.work import Later
from dsh_cli.mcp_server.tasks.store import POLL_INTERVAL_MS, Tasks, iso_time, standing, ttl_ms

__all__ = ["EXTENSION", "METHODS", "cancel", "create_result", "declared", "detailed", "get",
           "missing_capability", "task_wire", "update"]

EXTENSION = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
INVALID_PARAMS = -32602
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
HEADER_MISMATCH = -32020


def declared(meta: Mapping[str, Any] | None) -> bool:
    """Whether this request's ``_meta`` client capabilities name the extension."""
    capabilities = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, Mapping) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def missing_capability() -> Exception:
    """The ``-32021`` error a request without the extension gets from ``tasks/*``."""
    from mcp.shared.exceptions import MCPError

    return MCPError(MISSING_REQUIRED_CLIENT_CAPABILITY, "Missing required client capability",
                    {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})


def task_wire(record: Later) -> dict[str, Any]:
    """The extension's ``Task`` (``ttlMs``, ``pollIntervalMs``)."""
    state = standing(record)
    task: dict[str, Any] = {"taskId": record.id, "status": state.status,
                            "createdAt": iso_time(record.made),
                            "lastUpdatedAt": iso_time(state.at),
                            # none: a hub's task read from its store, kept as its entry
                            "ttlMs": ttl_ms(record) if record.ttl is not None else None,
                            "pollIntervalMs": POLL_INTERVAL_MS}
    if state.message:
        task["statusMessage"] = state.message
    return task


def create_result(record: Later, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """``CreateTaskResult``: ``Result & Task``, flat (with ``_meta`` when given)."""
    result: dict[str, Any] = {"resultType": "task", **task_wire(record)}
    return {**result, "_meta": meta} if meta else result


async def _find(tasks: Tasks, owner: str, params: Any, headers: Mapping[str, str] | None,
                ) -> Later:
    from mcp.shared.exceptions import MCPError

    task_id = params.get("taskId") if isinstance(params, Mapping) else None
    routed = headers.get("mcp-name") if headers is not None else None
    if routed is not None and routed != task_id:  # SEP-2243: the header mirrors the body
        raise MCPError(HEADER_MISMATCH, "Mcp-Name header does not match the request body's "
                                        "'taskId' parameter")
    record = await tasks.find(owner, task_id)
    if record is None:
        raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
    return record


async def get(tasks: Tasks, owner: str, params: Any,
              headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``tasks/get``: the task, its result or error inlined once it ended."""
    record = await _find(tasks, owner, params, headers)
    tasks.mark_fetched(record)
    return detailed(record)


def detailed(record: Later) -> dict[str, Any]:
    """``DetailedTask``: the task, its result or error inlined once it ended."""
    task: dict[str, Any] = {"resultType": "complete", **task_wire(record)}
    end = standing(record)
    if end.status == "completed" and end.result is not None:
        task["result"] = end.result
    elif end.status == "failed" and end.error is not None:
        task["error"] = end.error
    return task


async def update(tasks: Tasks, owner: str, params: Any,
                 headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``tasks/update``: acknowledged; no dsh task has an input request outstanding."""
    await _find(tasks, owner, params, headers)
    return {"resultType": "complete"}


async def cancel(tasks: Tasks, owner: str, params: Any,
                 headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``tasks/cancel``: acknowledged, for a live task or an ended one alike; when the
    answer came first, once the task has completed with it (a ``tasks/get`` then agrees)."""
    record = await _find(tasks, owner, params, headers)
    if not await tasks.cancel_found(record):
        await tasks.ended(record)
    return {"resultType": "complete"}
