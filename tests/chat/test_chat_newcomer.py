"""Chat commands a newcomer reaches for: /model NAME, a new line, a stopped reply marked."""

from __future__ import annotations

import json

from dsh_cli.agent.loop import INTERRUPTED_MARKER
from dsh_cli.models.scripted import ScriptedModel

ENTER = "\r"
ESC = "\x1b"
CTRL_D = "\x04"


def _after_first_delta(action):
    import asyncio

    from dsh_cli.core.events import AssistantDelta

    async def during(repl, events):
        while not any(isinstance(event, AssistantDelta) for event in events):
            await asyncio.sleep(0.005)
        action(repl)

    return during


def test_slash_model_name_switches_the_model_for_the_next_turn(drive, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"content": "from the script"}]}))
    chat = drive(f"/model script:{script}" + ENTER + "hi" + ENTER + CTRL_D)
    assert f"model script:{script} from the next message on" in chat.out
    assert chat.runtime.model.name == f"script:{script}"
    assert chat.runtime.loop.model is chat.runtime.model
    assert chat.out.endswith("from the script\n")


def test_slash_model_with_a_model_that_cannot_be_used_keeps_the_old_one(drive):
    chat = drive("/model deepseek-chat" + ENTER + CTRL_D)  # no key in tests
    assert "dsh: MISSING_API_KEY: " in chat.out
    assert chat.runtime.model.name == "demo"


def test_alt_enter_types_a_new_line_and_help_says_so(scripted, drive):
    chat = drive("/help" + ENTER + "line one" + ESC + ENTER + "line two" + ENTER + CTRL_D,
                 model=scripted({"content": "ok"}))
    assert "alt-enter (or esc then enter) new line" in chat.out
    users = [m["content"] for m in chat.runtime.loop.messages if m["role"] == "user"]
    assert users == ["line one\nline two"]


class Recording(ScriptedModel):
    """A scripted model that keeps the messages of each call."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[list[dict]] = []

    def stream(self, messages, tools):
        self.sent.append([dict(message) for message in messages])
        return super().stream(messages, tools)


def test_a_reply_stopped_with_ctrl_c_is_stored_marked_interrupted(drive):
    slow = Recording([{"content": "one two three four five six seven eight nine ten " * 20},
                      {"content": "next reply"}], delay=0.02)
    chat = drive("go" + ENTER + "again" + ENTER + CTRL_D, model=slow,
                 during=_after_first_delta(lambda repl: repl.interrupt()))
    partial = chat.runtime.loop.messages[1]
    assert partial["role"] == "assistant"
    assert partial["content"].startswith("one ") and partial["content"].endswith(INTERRUPTED_MARKER)
    # the next model call is sent the marked message
    assert slow.sent[-1][1]["content"].endswith(INTERRUPTED_MARKER)


def test_the_stored_session_goes_on_with_the_model_it_switched_to(tmp_path):
    from dsh_cli.config import load_settings
    from dsh_cli.runtime import build_runtime

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"content": "from the script"}]}))
    runtime = build_runtime(load_settings(model="demo", environ={}, config={}))
    try:
        assert runtime.store is not None
        runtime.switch_model(f"script:{script}")
        assert runtime.store.load_session(runtime.session_id).model == f"script:{script}"
    finally:
        runtime.close()
