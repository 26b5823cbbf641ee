"""The scripted model: turn n for n assistant messages, raw argument strings, errors."""

from __future__ import annotations

import asyncio
import json

import pytest

from dsh_cli.models import Completion, ModelError, TextDelta
from dsh_cli.models.scripted import ScriptedModel


def collect(model, messages):
    async def run():
        return [item async for item in model.stream(messages, [])]

    return asyncio.run(run())


def test_turn_follows_the_number_of_assistant_messages():
    model = ScriptedModel([{"content": "first"}, {"content": "second"}])
    assert collect(model, [{"role": "user", "content": "x"}])[-1].content == "first"
    history = [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]
    assert collect(model, history)[-1].content == "second"


def test_text_streams_in_chunks_that_join_to_the_content():
    items = collect(ScriptedModel([{"content": "a few  words here"}]), [])
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "a few  words here"
    assert isinstance(items[-1], Completion)


def test_arguments_string_is_sent_raw_and_values_as_json_and_ids_generated():
    model = ScriptedModel([{"tool_calls": [{"name": "t", "arguments": "{oops"},
                                           {"name": "t", "arguments": {"a": 1}, "id": "mine"}]}])
    calls = collect(model, [])[-1].tool_calls
    assert calls[0].arguments == "{oops" and calls[0].id == "call_1_1"
    assert json.loads(calls[1].arguments) == {"a": 1} and calls[1].id == "mine"


def test_load_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": 3}')
    with pytest.raises(ModelError, match=r"bad\.json"):
        ScriptedModel.load(bad)
    with pytest.raises(ModelError, match="cannot read script"):
        ScriptedModel.load(tmp_path / "absent.json")


@pytest.mark.parametrize("delay", ['"slow"', "null", "-1", "true"])
def test_a_bad_delay_is_a_script_error(tmp_path, delay):
    path = tmp_path / "s.json"
    path.write_text(f'{{"delay": {delay}, "turns": []}}')
    with pytest.raises(ModelError, match="delay must be a number") as caught:
        ScriptedModel.load(path)
    assert caught.value.code == "SCRIPT_ERROR"
