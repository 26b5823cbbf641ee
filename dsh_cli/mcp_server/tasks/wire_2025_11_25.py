"""The 2025-11-25 shape of MCP tasks: ``task`` on ``tools/call``, ``tasks/get|result|list|cancel``.

The client asks for a task (``params.task``, with an optional ``ttl``) on a tool whose
``execution.taskSupport`` is ``"optional"``, and the server's ``capabilities.tasks`` says
which requests may be augmented. ``tasks/result`` waits for the end and returns what the
call would have; ``tasks/cancel`` of an ended task is ``-32602``. Every change of status is
a ``notifications/tasks/status``. A question waiting for the human is ``working``:
``input_required`` means the *client* must send input (through ``tasks/result``), and the
answer comes from the desk, not from the client.
"""

from __future__ import annotations

from typing import Any

from dsh_cli.mcp_server.owned.work import Later
from dsh_cli.mcp_server.tasks.store import POLL_INTERVAL_MS, Tasks, iso_time, standing, ttl_ms

__all__ = ["CAPABILITY", "ERA", "METHODS", "cancel", "create_result", "get", "list_tasks", "result",
           "status_params", "task_wire"]

ERA = "2025-11-25"  # the one version with tasks in the core protocol
METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")
CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
RELATED_TASK = "io.modelcontextprotocol/related-task"
INVALID_PARAMS = -32602


def task_wire(record: Later) -> dict[str, Any]:
    """The ``Task`` object of this era (``ttl`` and ``pollInterval`` in milliseconds)."""
    state = standing(record)
    task: dict[str, Any] = {"taskId": record.id, "status": state.status,
                            "createdAt": iso_time(record.made),
                            "lastUpdatedAt": iso_time(state.at),
                            # none: a hub's task read from its store, kept as its entry
                            "ttl": ttl_ms(record) if record.ttl is not None else None,
                            "pollInterval": POLL_INTERVAL_MS}
    if state.message:
        task["statusMessage"] = state.message
    return task


def create_result(record: Later, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """``CreateTaskResult``: the task, nested (with ``_meta`` when given)."""
    return {"task": task_wire(record), **({"_meta": meta} if meta else {})}


def status_params(record: Later) -> dict[str, Any]:
    """``notifications/tasks/status``'s params: the task as it stands."""
    return task_wire(record)


async def _find(tasks: Tasks, owner: str, params: Any) -> Later:
    from mcp.shared.exceptions import MCPError

    task_id = params.get("taskId") if isinstance(params, dict) else None
    record = await tasks.find(owner, task_id)
    if record is None:
        raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
    return record


async def get(tasks: Tasks, owner: str, params: Any) -> dict[str, Any]:
    """``tasks/get``."""
    record = await _find(tasks, owner, params)
    tasks.mark_fetched(record)  # once it ended, how is known to its client now
    return task_wire(record)


async def result(tasks: Tasks, owner: str, params: Any) -> dict[str, Any]:
    """``tasks/result``: waits for the end; a client that left and came back still gets it."""
    from mcp.shared.exceptions import MCPError

    record = await _find(tasks, owner, params)
    await tasks.ended(record)  # a cancelled wait leaves the task running
    tasks.mark_fetched(record)
    end = standing(record)
    if end.status == "completed" and end.result is not None:
        # the 2026 discriminator has no place on this wire
        called = {key: value for key, value in end.result.items() if key != "resultType"}
        meta = {**(called.get("_meta") or {}), RELATED_TASK: {"taskId": record.id}}
        return {**called, "_meta": meta}
    if end.status == "failed" and end.error is not None:
        raise MCPError(end.error["code"], end.error["message"])
    raise MCPError(INVALID_PARAMS, f"the task was cancelled: {end.message}")


async def list_tasks(tasks: Tasks, owner: str, params: Any) -> dict[str, Any]:
    """``tasks/list``: the caller's own tasks, a page from ``params.cursor`` (a session's
    fit in one; a hub's agent token's are paged through its store)."""
    cursor = params.get("cursor") if isinstance(params, dict) else None
    records, following = await tasks.listed(owner, cursor)
    page: dict[str, Any] = {"tasks": [task_wire(record) for record in records]}
    return {**page, "nextCursor": following} if following is not None else page


async def cancel(tasks: Tasks, owner: str, params: Any) -> dict[str, Any]:
    """``tasks/cancel``: the task, now cancelled; an ended one cannot be, nor one whose
    answer came first (the refusal waits for it to be recorded, so it names the end)."""
    from mcp.shared.exceptions import MCPError

    record = await _find(tasks, owner, params)
    if not await tasks.cancel_found(record):
        await tasks.ended(record)  # decided: its outcome is on its way
        raise MCPError(INVALID_PARAMS, f"Cannot cancel task: already {standing(record).status}")
    return task_wire(record)
