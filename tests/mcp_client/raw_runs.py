"""One tool of ``raw_form_server.py`` called by a scripted model in a real ``dsh run --jsonl``."""

from __future__ import annotations

import json
import subprocess
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
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"raw": server or entry()}}))
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"name": f"mcp__raw__{tool}", "arguments": arguments}]},
        {"content": "done"}]}))
    result = subprocess.run([DSH, "run", "--jsonl", "--model", f"script:{script}",
                             "--mcp-config", str(servers), "--allow", "mcp__raw", "go"],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=CEILING)
    return result, [json.loads(line) for line in result.stdout.splitlines()]
