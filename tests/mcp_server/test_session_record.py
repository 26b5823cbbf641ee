"""The session a ``dsh mcp`` process records is its own small part (``session_record.py``)."""

from __future__ import annotations

from pathlib import Path

from dsh_cli.core.events import AssistantMessage
from dsh_cli.interaction import UserInteraction
from dsh_cli.mcp_server.service import AskService
from dsh_cli.mcp_server.session_record import SessionRecord
from dsh_cli.store import SessionStore

SERVICE = Path(__file__).resolve().parents[2] / "dsh_cli" / "mcp_server" / "service.py"


def test_the_first_call_opens_one_session_that_records_the_stream(tmp_path):
    with SessionStore.open(tmp_path / "s.db") as store:
        ui = UserInteraction()
        record = SessionRecord(ui, store)
        record.open("claude-code")
        record.open("another")  # one session per process: the first call's
        record.emit(AssistantMessage("hi", []))
        record.close()
        record.emit(AssistantMessage("not recorded", []))
        [summary] = store.list_sessions()
        assert (summary.model, summary.agent, ui.session_id) == (
            "mcp:claude-code", "claude-code", record.session_id)
        messages = store.load_session(summary.id).messages
        assert [m["content"] for m in messages] == ["hi"]


def test_a_store_that_fails_is_one_line_and_the_calls_go_on(tmp_path):
    said: list[str] = []
    store = SessionStore.open(tmp_path / "s.db")
    store.close()  # every write now fails
    record = SessionRecord(UserInteraction(), store, report=said.append)
    record.open("agent")
    record.emit(AssistantMessage("hi", []))
    record.mark_interrupted()
    assert record.session_id is None and record.store is None
    assert len(said) == 1 and said[0].startswith("dsh: STORE_ERROR: ")
    assert said[0].endswith("(batches are not recorded)")


def test_without_a_store_nothing_is_recorded_and_nothing_said():
    record = SessionRecord(UserInteraction())
    record.open("agent")
    record.mark_interrupted()
    record.close()
    assert record.session_id is None


def test_ask_service_keeps_no_session_of_its_own():
    service = AskService(UserInteraction())
    assert isinstance(service.session, SessionRecord)
    source = SERVICE.read_text(encoding="utf-8")
    for part in ("create_session", ".record(", "mark_interrupted", "StoreError"):
        assert part not in source, f"service.py does the session record's {part}"
