"""Bug: a stream chunk of the wrong shape is INTERNAL_ERROR (AttributeError), not MODEL_STREAM.
Copy into tests/hardening/ next to test_model_faults.py to run."""

from __future__ import annotations

import pytest
from fakes.openai_server import Reply
from test_model_faults import _assert_one_line, _run, server  # noqa: F401


@pytest.mark.parametrize("events", [
    ['{"choices": "not a list"}', "[DONE]"],
    ['{"choices": [{"delta": "text"}]}', "[DONE]"],
    ['["a list"]', "[DONE]"],
], ids=["choices-str", "delta-str", "list"])
def test_a_chunk_of_the_wrong_shape_is_a_model_stream_error(server, events):  # noqa: F811
    server.default = Reply(raw_events=events)
    line = _assert_one_line(_run(server))
    assert line.startswith("dsh: MODEL_STREAM: ")
