"""`dsh run` against a model server that sends garbage: one clear stderr line, exit 1.

Dropped connections, stalls and silent servers are pinned at the client level in
`tests/models/test_openai_compat.py` and through the CLI in `tests/cli/test_run_openai.py`;
these are the replies that are not what an OpenAI-compatible server sends at all.
"""

from __future__ import annotations

import pytest
from fakes.openai_server import Reply
from harness.model_faults import KEY, assert_one_line, run_against


@pytest.mark.parametrize("events", [
    ["<html><body>502 Bad Gateway</body></html>"],  # a proxy's page in the stream
    ['{"id": "x", "choices": [{"delta": {"content": "half'],  # JSON cut inside a chunk
], ids=["html", "cut-json"])
def test_a_garbage_stream_is_one_model_error_line(server, events):
    server.default = Reply(raw_events=events)  # retries get the same garbage
    assert_one_line(run_against(server))


def test_an_error_message_with_escape_sequences_is_printed_clean(server):
    server.default = Reply.error(400, "bad \x1b]52;c;ZXZpbA==\x07\x1b[2Jthing \u202e " + KEY)
    line = assert_one_line(run_against(server))
    assert "bad" in line and "thing" in line and "\u202e" not in line
