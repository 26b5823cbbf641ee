"""Session store budget: append 10,000 messages / load that session (≤ 1 s / ≤ 0.2 s).

Run: ``python bench/bench_store.py`` (``--messages N``, ``--repeat R``). Messages go in
through the real recording path (events on an ``EventStream``, one transaction each),
in the shapes a conversation has: user text, assistant text with tool calls, tool results.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

BUDGET_APPEND = 1.0
BUDGET_LOAD = 0.2


def _events(count: int) -> list:
    from dsh_cli.core.events import AssistantMessage, ToolResultEvent, UserMessage

    events = []
    for index in range(count):
        kind = index % 3
        if kind == 0:
            events.append(UserMessage(f"message {index}: " + "lorem ipsum " * 8))
        elif kind == 1:
            events.append(AssistantMessage("Let me check. " * 4, [
                {"id": f"call_{index}", "name": "ask_user_question",
                 "arguments": '{"questions": [{"id": "db", "question": "Which?"}]}'}]))
        else:
            events.append(ToolResultEvent(f"call_{index - 1}", "ask_user_question",
                                          '{"answers": [{"id": "db", "selected": ["SQLite"]}]}'))
    return events


def measure(count: int = 10_000) -> tuple[float, float]:
    """Seconds to append ``count`` messages through ``record``, and to load them back."""
    from dsh_cli.core.events import EventStream
    from dsh_cli.store import SessionStore

    events = _events(count)
    with tempfile.TemporaryDirectory() as directory:
        with SessionStore.open(Path(directory) / "sessions.db") as store:
            session_id = store.create_session("bench", system="You are a benchmark.")
            stream = EventStream()
            store.record(stream, session_id)
            started = time.perf_counter()
            for event in events:
                stream.emit(event)
            append = time.perf_counter() - started
        with SessionStore.open(Path(directory) / "sessions.db") as store:  # a fresh resume
            started = time.perf_counter()
            record = store.load_session(session_id)
            load = time.perf_counter() - started
        assert len(record.messages) == count + 1
    return append, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    runs = [measure(args.messages) for _ in range(args.repeat)]
    append = statistics.median(run[0] for run in runs)
    load = statistics.median(run[1] for run in runs)
    print(f"{'measure':<40} {'median':>9} {'budget':>8}  ok")
    for name, figure, budget in (
        (f"store: append {args.messages:,} messages", append, BUDGET_APPEND),
        (f"store: load a {args.messages:,}-message session", load, BUDGET_LOAD),
    ):
        print(f"{name:<40} {figure:>8.3f}s {budget:>7.1f}s  {'yes' if figure <= budget else 'NO'}")


if __name__ == "__main__":
    main()
