"""The controller's end of a JSON-lines relay in the same process: frames in, events out."""

from __future__ import annotations

import asyncio
import json
import os

from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction, UserInteractionError
from dsh_cli.providers.relay import JsonLinesRelay

SESSION = "s_test"
QUESTIONS = [
    {"id": "db", "question": "Which database?",
     "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]},
    {"id": "features", "question": "Which features?", "multi_select": True,
     "options": [{"label": "Auth"}, {"label": "Billing"}]},
    {"id": "name", "question": "Project name?"},
]


class Wire:
    """The controller's end: frames into an os.pipe, events out as parsed lines."""

    def __init__(self) -> None:
        read_end, self._write_end = os.pipe()
        self.input = os.fdopen(read_end, "rb", buffering=0)
        self.events: list[dict] = []
        self.flushes = 0

    # the relay's output stream
    def write(self, text: str) -> int:
        assert text.endswith("\n") and text.count("\n") == 1, "one JSON object per line"
        self.events.append(json.loads(text))
        return len(text)

    def flush(self) -> None:
        self.flushes += 1

    def send(self, frame) -> None:
        if isinstance(frame, bytes):
            os.write(self._write_end, frame + b"\n")
            return
        text = frame if isinstance(frame, str) else json.dumps(frame)
        os.write(self._write_end, (text + "\n").encode())

    def close(self) -> None:
        if self._write_end is not None:
            os.close(self._write_end)
            self._write_end = None

    def of(self, kind: str) -> list[dict]:
        return [event for event in self.events if event["type"] == kind]

    async def wait_for(self, kind: str, count: int = 1) -> list[dict]:
        for _ in range(1000):
            if len(self.of(kind)) >= count:
                return self.of(kind)
            await asyncio.sleep(0.005)
        raise AssertionError(f"no {count} x {kind} in {self.events}")


def ask_task(ui, questions=QUESTIONS, rpc_id=None, **fields):
    request = AskUserQuestionRequest.model_validate({"questions": questions})
    for name, value in fields.items():
        setattr(request, name, value)
    return asyncio.create_task(ui.ask(request, rpc_id=rpc_id))


def run(scenario, *, questions_only=False, session_id=SESSION, timeout=None):
    """Run ``scenario(ui, relay, wire)`` with a started relay; tear everything down after."""
    wire = Wire()

    async def go():
        ui = UserInteraction(session_id=session_id, timeout=timeout)
        relay = JsonLinesRelay(ui, input=wire.input, output=wire, questions_only=questions_only)
        ui.register_provider(relay.provider)
        await relay.start()
        try:
            return await asyncio.wait_for(scenario(ui, relay, wire), 10)
        finally:
            wire.close()
            await asyncio.wait_for(relay.eof.wait(), 5)
            await relay.close()
            wire.input.close()

    return asyncio.run(go()), wire


async def outcome(task):
    try:
        return (await task).to_json()
    except UserInteractionError as error:
        return error.code, error.message


def answer(rpc_id, answers, session_id=SESSION):
    return {"type": "question/answer", "rpc_id": rpc_id, "session_id": session_id,
            "answers": answers}
