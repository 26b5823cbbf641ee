"""MCP tasks on ``dsh mcp``: the store, the 2025-11-25 wire, the 2026-07-28 extension.

    store.py            the tasks' view of the one store of work fetched later (``owned/``):
                        one tool call each, owned, kept ``ttl``, run apart
    layer.py            the SDK middleware that serves both eras' task surface
    wire_2025_11_25.py  the 2025-11-25 shape: ``params.task``, ``tasks/get|result|list|cancel``
    wire_2026_07_28.py  the 2026-07-28 tasks extension (SEP-2663): ``tasks/get|update|cancel``
    listen.py           ``notifications/tasks`` over ``subscriptions/listen`` (2026-07-28)
"""

from __future__ import annotations

from dsh_cli.mcp_server.tasks.layer import (
    OwnerOf,
    Staged,
    TaskLayer,
    WorkFor,
    close_tasks,
    install_tasks,
)
from dsh_cli.mcp_server.tasks.store import TaskEnd, Tasks

__all__ = ["OwnerOf", "Staged", "TaskEnd", "TaskLayer", "Tasks", "WorkFor", "close_tasks",
           "install_tasks"]
