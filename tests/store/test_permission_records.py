"""Every permission request and decision lands in the session store, and `sessions show` has it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess

from harness.dsh_under_test import DSH

from dsh_cli.core.errors import HarnessError
from dsh_cli.core.events import EventStream, PermissionRequested
from dsh_cli.permissions import Hints, PermissionGate, PermissionRequest
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.store import SessionStore
from dsh_cli.store.migrations import MIGRATIONS, migrate


def reset(call_id):
    return PermissionRequest(tool="mcp__git__git_reset", arguments={"repo_path": "/tmp/名"},
                             server="git", hints=Hints(destructive=True), call_id=call_id)


def ask_twice(store, session_id):
    """A gate asking through a remote table: one request denied with a reason, one dismissed."""
    events = EventStream()
    stop = store.record(events, session_id)
    remote = RemotePermissions()
    gate = PermissionGate(events=events, session_id=session_id)
    gate.register_provider(remote)
    asked: list[str] = []
    events.subscribe(lambda event: asked.append(event.rpc_id)
                     if isinstance(event, PermissionRequested) else None)

    async def one(call_id, settle):
        task = asyncio.ensure_future(gate.check(reset(call_id), "digest"))
        while len(asked) < 1 or (call_id == "c2" and len(asked) < 2):
            await asyncio.sleep(0.005)
        pending_in_store = [p.status for p in store.permission_requests(session_id)]
        assert settle(remote, asked[-1]).accepted
        try:
            await task
        except HarnessError as error:
            return error.code, pending_in_store
        raise AssertionError("the call was allowed")

    async def main():
        return (await one("c1", lambda r, i: r.respond(i, "deny", "not on main",
                                                       session_id=session_id)),
                await one("c2", lambda r, i: r.cancel(i, session_id=session_id)))

    try:
        return asyncio.run(main()), asked
    finally:
        stop()


def test_requests_and_decisions_are_recorded_as_they_happen():
    with SessionStore.open() as store:
        session_id = store.create_session("demo")
        ((first, second), asked) = ask_twice(store, session_id)
        records = store.permission_requests(session_id)
        loaded = store.load_session(session_id)
    assert first == ("PERMISSION_DENIED", ["pending"])
    assert second == ("ASK_CANCELLED", ["decided", "pending"])
    assert [record.rpc_id for record in records] == asked
    denied, dismissed = (record.to_json() for record in records)
    assert denied["resolved_at"] >= denied["created_at"]
    assert {key: denied[key] for key in denied if not key.endswith("_at")} == {
        "rpc_id": asked[0], "call_id": "c1", "tool": "mcp__git__git_reset", "server": "git",
        "arguments": {"repo_path": "/tmp/名"}, "hints": {"destructive": True},
        "status": "decided", "decision": "deny", "message": "not on main"}
    assert (dismissed["status"], dismissed["decision"], dismissed["message"]) == (
        "cancelled", None, None)
    assert loaded.permissions == records


def test_sessions_show_json_carries_the_permissions():
    with SessionStore.open() as store:
        session_id = store.create_session("demo")
        _, asked = ask_twice(store, session_id)
    shown = subprocess.run([DSH, "sessions", "show", session_id, "--json"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    permissions = json.loads(shown.stdout)["permissions"]
    assert [(p["rpc_id"], p["status"], p["decision"]) for p in permissions] == [
        (asked[0], "decided", "deny"), (asked[1], "cancelled", None)]


def test_a_store_from_before_permissions_gains_the_table_and_keeps_its_sessions(tmp_path):
    path = tmp_path / "s.db"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, path, MIGRATIONS[:3])
    db.execute("INSERT INTO sessions (id, model, created_at, updated_at) VALUES "
               "('s_old', 'demo', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')")
    db.close()
    with SessionStore.open(path) as store:
        assert store.load_session("s_old").permissions == []
        ask_twice(store, "s_old")
        assert [p.tool for p in store.permission_requests("s_old")] == ["mcp__git__git_reset"] * 2
        store.delete_session("s_old")
        assert store.permission_requests("s_old") == []
