"""A controller at the far end of a real `dsh run --jsonl` (or `dsh ask --jsonl`) child.

``Peer`` writes frames as bytes and reads events line by line in a thread, so a test can
also *stop* reading (``reading=False``): stdout then fills like a pipe nobody drains.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from harness.dsh_under_test import DSH, REAL_DSH

WAIT = 30  # generous: a stuck child fails the test instead of hanging the suite

ASK = {"id": "name", "question": "Project name?",
       "options": [{"label": "acme"}, {"label": "other"}]}


def script(path: Path, *turns: dict[str, Any]) -> str:
    """A scripted model file with these turns, as a ``--model`` value."""
    path.write_text(json.dumps({"turns": list(turns)}), encoding="utf-8")
    return f"script:{path}"


def asking(content: str = "Asking.", questions: list[dict[str, Any]] | None = None
           ) -> dict[str, Any]:
    """A scripted turn that calls ask_user_question."""
    return {"content": content, "tool_calls": [{"name": "ask_user_question",
                                                "arguments": {"questions": questions or [ASK]}}]}


class Peer:
    """The other end of the child's pipes."""

    def __init__(self, *args: str, reading: bool = True, env: dict[str, str] | None = None,
                 stderr: int | None = subprocess.PIPE,
                 real_start: bool = False) -> None:
        # real_start: the dsh process itself, for a test that reads its memory
        self.process = subprocess.Popen(
            [REAL_DSH if real_start else DSH, *args], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=stderr, env={**os.environ, **(env or {})})
        self.events: list[dict[str, Any]] = []
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        if reading:
            self.start_reading()

    def start_reading(self) -> None:
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, frame: Any) -> None:
        data = frame if isinstance(frame, bytes) else (
            frame if isinstance(frame, str) else json.dumps(frame)).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def next(self) -> dict[str, Any] | None:
        line = self._lines.get(timeout=WAIT)
        if line is None:
            return None
        event = json.loads(line)
        self.events.append(event)
        return event

    def until(self, kind: str) -> dict[str, Any]:
        while (event := self.next()) is not None:
            if event["type"] == kind:
                return event
        raise AssertionError(f"stdout ended before {kind}: {self.events}")

    def finish(self) -> int:
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            self.process.stdin.close()
        while self.next() is not None:
            pass
        return self.process.wait(timeout=WAIT)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except BrokenPipeError:
                    pass


def stored_tool_results(session_id: str) -> list[str]:
    """The tool messages' content of a stored session, through `dsh sessions show`."""
    shown = subprocess.run([DSH, "sessions", "show", session_id, "--json"],
                           capture_output=True, text=True, timeout=WAIT, check=True)
    return [m["content"] for m in json.loads(shown.stdout)["messages"] if m["role"] == "tool"]
