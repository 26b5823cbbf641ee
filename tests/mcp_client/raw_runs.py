"""Tools of ``raw_form_server.py`` called by a scripted model in a real ``dsh run --jsonl``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.dsh_under_test import DSH
from mcp_client.raw_form_server import entry

CEILING = 60


def run_raw_tool(tmp_path: Path, tool: str, arguments: dict[str, Any],
                 server: dict[str, Any] | None = None,
                 ) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    """The finished run (no controller: nothing answers a question) and its events; the
    server is a stdio child of this run unless ``server`` is another's entry."""
    return run_raw_tools(tmp_path, [(tool, arguments)], server)


def run_raw_tools(tmp_path: Path, calls: Sequence[tuple[str, dict[str, Any]]],
                  server: dict[str, Any] | None = None,
                  ) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    """``run_raw_tool`` with the model making ``calls`` one after another, a turn each."""
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"raw": server or entry()}}))
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        *({"tool_calls": [{"name": f"mcp__raw__{tool}", "arguments": arguments}]}
          for tool, arguments in calls),
        {"content": "done"}]}))
    result = subprocess.run([DSH, "run", "--jsonl", "--model", f"script:{script}",
                             "--mcp-config", str(servers), "--allow", "mcp__raw", "go"],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=CEILING * max(1, len(calls) // 4))
    return result, [json.loads(line) for line in result.stdout.splitlines()]


def by_call(events: list[dict], count: int) -> list[list[dict]]:
    """The events of each of the ``count`` tool calls of a run, in the order they were made."""
    calls = [event["call_id"] for event in events if event["type"] == "tool/started"]
    assert len(calls) == count, calls
    return [[event for event in events if event.get("call_id") == call] for call in calls]
