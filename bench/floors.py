"""Floors measured in the same run as dsh, so a loaded machine moves both alike.

``sqlite_floor``: the same messages written with bare ``sqlite3`` (WAL, ``synchronous =
NORMAL``, one ``BEGIN IMMEDIATE ... COMMIT`` each, as the store does), then read back.
``echo_floor``: a bare JSON-lines echo over the same kind of pipes as ``dsh run --jsonl``:
a child writes a question line, reads the answer line, and so on.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.controller import control

__all__ = ["echo_floor", "sqlite_floor"]

_ECHO_CHILD = r"""
import json, sys
count = int(sys.argv[1])
question = {"id": "q1", "question": "Deploy?", "options": [{"label": "yes"}, {"label": "no"}]}
out, read = sys.stdout, sys.stdin.readline
for n in range(count):
    event = {"type": "question/requested", "rpc_id": f"q_{n:016x}", "session_id": "s_bench",
             "call_id": f"call_{n}", "questions": [question]}
    out.write(json.dumps(event, ensure_ascii=True) + "\n")
    out.flush()
    json.loads(read())
out.write(json.dumps({"type": "turn/completed", "session_id": "s_bench"}) + "\n")
out.flush()
"""


def sqlite_floor(messages: list[dict[str, Any]]) -> tuple[float, float]:
    """Seconds to write ``messages`` one transaction each with bare sqlite3, and to read them."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "floor.db"
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, "
                   "content TEXT, tool_calls TEXT, tool_call_id TEXT)")
        started = time.perf_counter()
        for message in messages:
            calls = message.get("tool_calls")
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO messages (session_id, role, content, tool_calls, "
                       "tool_call_id) VALUES (?, ?, ?, ?, ?)",
                       ("s", message["role"], message.get("content"),
                        json.dumps(calls) if calls else None, message.get("tool_call_id")))
            db.execute("COMMIT")
        append = time.perf_counter() - started
        db.close()
        db = sqlite3.connect(path)
        started = time.perf_counter()
        rows = db.execute("SELECT role, content, tool_calls, tool_call_id FROM messages "
                          "WHERE session_id = ? ORDER BY id", ("s",)).fetchall()
        loaded = [{"role": role, "content": content,
                   **({"tool_calls": json.loads(calls)} if calls else {}),
                   **({"tool_call_id": call_id} if call_id else {})}
                  for role, content, calls, call_id in rows]
        load = time.perf_counter() - started
        db.close()
        assert len(loaded) == len(messages)
    return append, load


def echo_floor(batches: int) -> float:
    """Batches per second through a bare JSON-lines echo child over pipes."""
    process = subprocess.Popen([sys.executable, "-c", _ECHO_CHILD, str(batches)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    return control(process, batches)
