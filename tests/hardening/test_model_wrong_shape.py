"""A stream chunk of the wrong shape is one MODEL_STREAM line, never an internal error."""

from __future__ import annotations

import pytest
from fakes.openai_server import Reply
from harness.model_faults import assert_one_line, run_against


@pytest.mark.parametrize("events", [
    ['{"choices": "not a list"}', "[DONE]"],
    ['{"choices": [{"delta": "text"}]}', "[DONE]"],
    ['["a list"]', "[DONE]"],
    ['{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0", "id": "a", '
     '"function": {"name": "t", "arguments": "{}"}}, {"index": 0, "id": "b"}]}}]}', "[DONE]"],
    ['{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", '
     '"function": {"name": 5, "arguments": "{}"}}]}}]}', "[DONE]"],
], ids=["choices-str", "delta-str", "list", "index-str", "name-number"])
def test_a_chunk_of_the_wrong_shape_is_a_model_stream_error(server, events):
    server.default = Reply(raw_events=events)
    line = assert_one_line(run_against(server))
    assert line.startswith("dsh: MODEL_STREAM: ")
