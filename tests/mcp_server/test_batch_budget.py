"""What the open batches of ``dsh mcp`` weigh is bounded by bytes, not by their count.

Raw JSON-RPC over HTTP to a real ``dsh mcp --http``: batches within every field's cap,
3.4 MB each (the SDK takes HTTP bodies up to 4 MiB; stdio takes 11 MB ones), kept open
(``--wait``, no desk); past ``PENDING_BYTES_PER_SESSION`` one more is ``TOO_MANY_PENDING``
at once, and another session still gets its ticket.
"""

from __future__ import annotations

import json
import sqlite3

from harness.batches import heavy_batch
from harness.tasks_wire import Wire2025, http_dsh

from dsh_cli.core.errors import TOO_MANY_PENDING
from dsh_cli.core.limits import PENDING_BYTES_PER_SESSION
from dsh_cli.store import SessionStore


def small_batch() -> dict:
    return {"delivery": "async", "questions": [
        {"id": "db", "question": "Which database?",
         "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}


def call(session: Wire2025, arguments: dict) -> dict:
    response = session.request("tools/call", {"name": "ask_user_question",
                                              "arguments": arguments}, timeout=60)
    return response["result"]["structuredContent"]


def test_a_sessions_open_batches_are_capped_by_bytes_and_the_others_keep_room():
    batch = heavy_batch()
    size = len(json.dumps(batch, separators=(",", ":")).encode())
    fits = PENDING_BYTES_PER_SESSION // size
    with http_dsh("--wait", "600") as url:
        heavy, other = Wire2025(url), Wire2025(url)
        accepted = [call(heavy, batch) for _ in range(fits)]
        refused = call(heavy, batch)
        small = call(other, small_batch())
    assert all(result.get("accepted") is True for result in accepted), accepted
    assert refused["error"]["code"] == TOO_MANY_PENDING
    assert "open batches of this session hold" in refused["error"]["message"]
    assert "at most 32.0 MiB" in refused["error"]["message"]
    assert small.get("accepted") is True
    with SessionStore.open() as store, sqlite3.connect(store.path) as db:
        [[recorded]] = db.execute("SELECT sum(length(tool_calls)) FROM messages").fetchall()
    assert fits * size <= recorded < (fits + 1) * size  # the refused call's were not recorded
