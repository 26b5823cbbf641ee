"""``dsh run --jsonl`` (or ``dsh ask --jsonl``) as a child driven through its pipes."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading

from harness.dsh_under_test import DSH

WAIT = 15  # generous: a stuck process fails the test instead of hanging the suite


class Controller:
    """The other end of the pipes: frames in, one parsed event per stdout line out."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [DSH, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding="utf-8", env=dict(os.environ),
        )
        self.events: list[dict] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, frame) -> None:
        text = frame if isinstance(frame, str) else json.dumps(frame)
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def next(self) -> dict | None:
        """The next event (every stdout line must be one JSON object); None at EOF."""
        line = self._lines.get(timeout=WAIT)
        if line is None:
            return None
        assert line.endswith("\n")
        event = json.loads(line)
        assert isinstance(event, dict) and isinstance(event.get("type"), str), line
        self.events.append(event)
        return event

    def until(self, kind: str) -> dict:
        while (event := self.next()) is not None:
            if event["type"] == kind:
                return event
        raise AssertionError(f"stdout ended before {kind}: {self.events}\n{self.stderr()}")

    def finish(self) -> int:
        """Close stdin, drain the remaining events, and return the exit status."""
        if not self.process.stdin.closed:
            self.process.stdin.close()
        while self.next() is not None:
            pass
        return self.process.wait(timeout=WAIT)

    def stderr(self) -> str:
        return self.process.stderr.read() if self.process.poll() is not None else ""

    def of(self, kind: str) -> list[dict]:
        return [event for event in self.events if event["type"] == kind]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if not stream.closed:
                try:
                    stream.close()
                except BrokenPipeError:
                    pass
