"""The store is split by aggregate: each table is written by the module of its part."""

from __future__ import annotations

import re
from pathlib import Path

from dsh_cli.store import SessionStore
from dsh_cli.store.permission_log import PermissionLog
from dsh_cli.store.questions import QuestionLog

STORE = Path(__file__).resolve().parents[2] / "dsh_cli" / "store"
_WRITE = re.compile(r"(?:INSERT(?: OR IGNORE)? INTO|(?<!DO )UPDATE|DELETE FROM) (\w+)")
# table -> the modules that write it (migrations.py, which makes them, aside)
WRITERS = {
    "questions": {"questions.py"},
    "answer_recall": {"questions.py"},
    "permissions": {"permission_log.py"},
    "messages": {"sessions.py"},
    "sessions": {"sessions.py", "questions.py", "permission_log.py"},  # its updated_at
}


def test_each_table_is_written_by_its_part():
    strays = []
    for path in sorted(STORE.glob("*.py")):
        if path.name == "migrations.py":
            continue
        for table in _WRITE.findall(path.read_text(encoding="utf-8")):
            if path.name not in WRITERS.get(table, set()):
                strays.append(f"{path.name} writes {table}")
    assert strays == []


def test_the_store_is_its_parts_joined():
    assert issubclass(SessionStore, QuestionLog) and issubclass(SessionStore, PermissionLog)
    for name in ("question_requested", "question_history", "last_answers"):
        assert name in vars(QuestionLog) and name not in vars(SessionStore)
    for name in ("permission_requested", "permission_resolved", "permission_requests"):
        assert name in vars(PermissionLog) and name not in vars(SessionStore)


def test_the_recorder_writes_what_the_stream_says(tmp_path):
    from dsh_cli.core.events import EventStream, UserMessage

    with SessionStore.open(tmp_path / "s.db") as store:
        session = store.create_session("m")
        events = EventStream()
        stop = store.record(events, session)
        events.emit(UserMessage("hello"))
        stop()
        events.emit(UserMessage("not recorded"))
        assert [m["content"] for m in store.load_session(session).messages] == ["hello"]
