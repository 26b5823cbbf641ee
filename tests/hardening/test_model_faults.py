"""`dsh run` against a model server that sends garbage: one clear stderr line, exit 1.

Dropped connections, stalls and silent servers are pinned at the client level in
`tests/models/test_openai_compat.py` and through the CLI in `tests/cli/test_run_openai.py`;
these are the replies that are not what an OpenAI-compatible server sends at all.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from dsh_under_test import DSH
from fakes.openai_server import Reply

KEY = "sk-hardening-0123456789abcdef"




def _run(server) -> subprocess.CompletedProcess:
    env = {**os.environ, "DSH_API_KEY": KEY}
    return subprocess.run(
        [DSH, "run", "--base-url", server.base_url, "-m", "some-model", "--no-input", "hi"],
        capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)


def _assert_one_line(result) -> str:
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dsh: MODEL_"), result.stderr
    assert "Traceback" not in result.stderr and "\x1b" not in result.stderr
    assert KEY not in result.stderr
    return lines[0]


@pytest.mark.parametrize("events", [
    ["<html><body>502 Bad Gateway</body></html>"],  # a proxy's page in the stream
    ['{"id": "x", "choices": [{"delta": {"content": "half'],  # JSON cut inside a chunk
], ids=["html", "cut-json"])
def test_a_garbage_stream_is_one_model_error_line(server, events):
    server.default = Reply(raw_events=events)  # retries get the same garbage
    _assert_one_line(_run(server))


def test_an_error_message_with_escape_sequences_is_printed_clean(server):
    server.default = Reply.error(400, "bad \x1b]52;c;ZXZpbA==\x07\x1b[2Jthing \u202e " + KEY)
    line = _assert_one_line(_run(server))
    assert "bad" in line and "thing" in line and "\u202e" not in line
