"""An "always" that cannot be saved (a read-only config directory) still applies to this call.

The human's decision is kept for this call and this session, and one line says it was not
remembered: through ``dsh mcp``'s ``approve_tool_use`` (the desk's ``permission/resolved``,
the agent's result an allow, no JSON-RPC error, no traceback) and through dsh's own agent
(``dsh run``). Real faults: as root, a read-only bind mount in a private mount namespace
(``unshare -m``), since permissions do not bind root; otherwise a directory made 0555.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

TESTS = Path(__file__).resolve().parents[1]
NOTES = str(TESTS / "fakes" / "mcp_notes_server.py")
ROOT = os.geteuid() == 0
CEILING = 120


def _can_mount() -> bool:
    if not ROOT or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"],
                           capture_output=True)
    return probe.returncode == 0


if ROOT and not _can_mount():
    pytest.skip("as root this needs a private mount namespace (unshare -m)",
                allow_module_level=True)


def _read_only(directory: Path, command: list[str], *, writable: Path | None = None,
               **kwargs) -> subprocess.CompletedProcess[str]:
    """Run ``command`` while ``directory`` is read-only (``writable`` inside it stays so)."""
    if ROOT:
        mounts = [f'mount --bind "{directory}" "{directory}"',
                  f'mount -o remount,bind,ro "{directory}"']
        if writable is not None:
            mounts.append(f'mount -t tmpfs -o mode=0700 tmpfs "{writable}"')
        script = " && ".join(mounts) + ' && exec "$@"'
        return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", *command],
                              capture_output=True, text=True, timeout=CEILING, **kwargs)
    directory.chmod(0o555)
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=CEILING,
                              **kwargs)
    finally:
        directory.chmod(0o755)


DRIVER = textwrap.dedent("""
    import asyncio, json, sys
    sys.path[:0] = [sys.argv[1]]  # tests/, for the harness package
    from harness.mcp_util import bounded, client, jsonl_desk

    REQUEST = {"tool_name": "Bash", "input": {"command": "make test"}, "tool_use_id": "t1"}

    def outcome(result):
        return {"is_error": result.is_error, "text": result.content[0].text}

    async def main():
        async with jsonl_desk() as desk, \\
                client("--wait", "20", name="claude-code", cwd=sys.argv[2]) as mcp:
            call = asyncio.ensure_future(mcp.call_tool("approve_tool_use", REQUEST))
            requested = await desk.event("permission/requested")
            await desk.send({"type": "permission/decision", "rpc_id": requested["rpc_id"],
                             "decision": "allow_always"})
            resolved = await desk.event("permission/resolved")
            try:
                first = outcome(await call)
            except Exception as error:  # what main did: a JSON-RPC error
                first = {"error": str(error)}
            # the same call again in this server process: allowed for its session
            again = outcome(await mcp.call_tool("approve_tool_use", REQUEST))
            return {"resolved": resolved, "first": first, "again": again}

    print(json.dumps(bounded(main())))
""")


def test_approve_tool_use_applies_an_always_it_cannot_save_and_says_so(dsh_home, tmp_path):
    (dsh_home / "run").mkdir(mode=0o700)  # the desk's sockets: the rest of DSH_HOME is read-only
    done = _read_only(dsh_home, [sys.executable, "-c", DRIVER, str(TESTS), str(tmp_path)],
                      writable=dsh_home / "run")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "error" not in seen["first"] and seen["first"]["is_error"] is not True, seen["first"]
    assert json.loads(seen["first"]["text"]) == {"behavior": "allow",
                                                 "updatedInput": {"command": "make test"}}
    assert json.loads(seen["again"]["text"])["behavior"] == "allow"
    resolved = seen["resolved"]
    assert resolved["decision"] == "allow_session"
    assert resolved["message"].startswith(
        f'"always" was not remembered: {dsh_home / "permissions.json"} ')
    assert len(resolved["message"].splitlines()) == 1
    assert "Traceback" not in done.stderr and "Errno" not in done.stderr + done.stdout
    assert not (dsh_home / "permissions.json").exists()


def test_dsh_run_applies_an_always_it_cannot_save_and_says_so(tmp_path, monkeypatch):
    # the config directory (where approvals go) read-only, the session store writable
    config, data = tmp_path / "config", tmp_path / "data"
    (config / "dsh").mkdir(parents=True)
    data.mkdir()
    monkeypatch.delenv("DSH_HOME")
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "XDG_DATA_HOME": str(data)}
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"notes": {"command": sys.executable,
                                                            "args": [NOTES]}}}))
    calls = [{"name": "mcp__notes__write_note", "arguments": {"text": text}}
             for text in ("one", "two")]
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"turns": [{"tool_calls": calls[:1]},
                                           {"tool_calls": calls[1:]}, {"content": "done"}]}))
    done = _read_only(config / "dsh", [DSH, "run", "-m", f"script:{model}", "--mcp-config",
                                       str(servers), "--plain", "note it"],
                      input="3\n", env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "Errno" not in out
    path = config / "dsh" / "permissions.json"
    said = [line for line in out.splitlines() if "not remembered" in line]
    assert len(said) == 1, out
    assert said[0].startswith(f'dsh: PRIVATE_FILE_ERROR: "always" was not remembered: {path} ')
    assert said[0].endswith("; allowed for this session only")
    assert out.count("[Permission]") == 1  # the second call was not asked again
    assert "done" in done.stdout
    assert not path.exists()
    # both calls ran (on main the first failed with the raw OSError the human never saw)
    listed = json.loads(subprocess.run([DSH, "sessions", "list", "--json"], env=env,
                                       capture_output=True, text=True, timeout=CEILING).stdout)
    latest = (listed if isinstance(listed, list) else listed["sessions"])[0]["id"]
    shown = json.loads(subprocess.run([DSH, "sessions", "show", "--json", latest], env=env,
                                      capture_output=True, text=True, timeout=CEILING).stdout)
    results = [m["content"] for m in shown["messages"] if m["role"] == "tool"]
    assert results == ["saved note 1: one", "saved note 2: two"], results
