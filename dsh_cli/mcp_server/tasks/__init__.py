"""MCP tasks on ``dsh mcp``: the store, the 2025-11-25 wire, the 2026-07-28 extension."""

from __future__ import annotations

from dsh_cli.mcp_server.tasks.layer import (
    OwnerOf,
    Staged,
    TaskLayer,
    WorkFor,
    close_tasks,
    install_tasks,
)
from dsh_cli.mcp_server.tasks.store import TaskRecord, TaskStore

__all__ = ["OwnerOf", "Staged", "TaskLayer", "TaskRecord", "TaskStore", "WorkFor", "close_tasks",
           "install_tasks"]
