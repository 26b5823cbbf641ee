"""`dsh run` against hostile model servers: deadlines, caps, bad text, echoed keys.

Each server here is a real HTTP server on 127.0.0.1 and each `dsh run` a real child
process, so what is pinned is what a user sees: the exit status, the one stderr line,
stdout, and what the store kept (`dsh sessions show --json`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

from fakes.openai_server import Reply
from harness.dsh_under_test import DSH, REAL_DSH
from hostile_model import HostileModel, chunk, finish

KEY = "sk-Hardening-0123456789abcdefXYZ"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "DSH_API_KEY": KEY, **extra}


def _run(base_url: str, *args: str, env: dict[str, str] | None = None,
         timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DSH, "run", "--base-url", base_url, "-m", "some-model", "--no-input", *args, "hi"],
        capture_output=True, text=True, timeout=timeout, env=env or _env(),
        stdin=subprocess.DEVNULL)


def _stored_messages() -> list[dict]:
    listed = subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                            text=True, timeout=30, check=True)
    [session] = json.loads(listed.stdout)
    shown = subprocess.run([DSH, "sessions", "show", session["id"], "--json"],
                           capture_output=True, text=True, timeout=30, check=True)
    return json.loads(shown.stdout)["messages"]


def _one_line(result: subprocess.CompletedProcess, code: str) -> str:
    lines = result.stderr.splitlines()
    assert result.returncode == 1, result.stderr
    assert len(lines) == 1 and lines[0].startswith(f"dsh: {code}: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def _paced(piece: bytes, every: float, seconds: float):
    """``piece`` every ``every`` seconds for at most ``seconds``; then the stream ends."""
    def body():
        yield chunk({"role": "assistant", "content": ""})
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(every)
            yield piece
    return body


# -- item 2: a turn has an idle deadline on content and a whole-call deadline -------------

def test_sse_comments_alone_hit_the_content_deadline():
    # Before: every comment reset the read timeout, and the run lasted as long as the server.
    with HostileModel(_paced(b": keep-alive\n\n", 0.1, 30)) as server:
        result = _run(server.base_url, env=_env(DSH_MODEL_TIMEOUT="1"))
    line = _one_line(result, "MODEL_TIMEOUT")
    assert "within 1s" in line and "no text, reasoning or tool call" in line


def test_empty_chunks_alone_hit_the_content_deadline():
    empty = b'data: {"id": "x", "choices": []}\n\n'
    with HostileModel(_paced(empty, 0.1, 30)) as server:
        result = _run(server.base_url, env=_env(DSH_MODEL_TIMEOUT="1"))
    _one_line(result, "MODEL_TIMEOUT")


def test_a_token_every_half_second_hits_the_whole_call_deadline(tmp_path):
    # Content keeps coming, so only the whole-call deadline (here from config.toml) ends it.
    (tmp_path / "home").mkdir(exist_ok=True)
    home = os.environ["DSH_HOME"]
    with open(os.path.join(home, "config.toml"), "w", encoding="utf-8") as config:
        config.write("model_deadline = 2\n")
    with HostileModel(_paced(chunk({"content": "tick "}), 0.5, 30)) as server:
        result = _run(server.base_url)
    line = _one_line(result, "MODEL_TIMEOUT")
    assert "did not finish within 2s" in line


def test_a_slow_but_steady_answer_still_streams_past_the_idle_timeout():
    def body():
        yield chunk({"role": "assistant", "content": ""})
        for word in ("slow ", "but ", "steady"):
            time.sleep(0.6)
            yield chunk({"content": word})
        yield finish()
    with HostileModel(body) as server:
        result = _run(server.base_url, env=_env(DSH_MODEL_TIMEOUT="1"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "slow but steady\n"


# -- item 3: lone surrogates and invalid UTF-8 from the model ------------------------------

def test_a_lone_surrogate_in_content_is_replaced_printed_and_stored(server):
    server.enqueue(Reply.text("bad \ud800 text"))  # json.dumps sends it as \ud800
    result = _run(server.base_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "bad \ufffd text\n"
    assert _stored_messages()[-1] == {"role": "assistant", "content": "bad \ufffd text"}


def test_a_lone_surrogate_in_question_text_is_replaced_and_the_batch_stored(server, tmp_path):
    question = {"id": "q1", "question": "Pick \udfff one", "header": "h\ud800",
                "options": [{"label": "A\ud800"}, {"label": "B"}]}
    server.enqueue(Reply.tool_calls([("ask_user_question", {"questions": [question]})]),
                   Reply.text("done"))
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"q1": ["A\ufffd"]}), encoding="utf-8")
    result = _run(server.base_url, "--answers", str(answers))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    tool_result = next(m for m in _stored_messages() if m["role"] == "tool")
    assert json.loads(tool_result["content"])["answers"][0]["selected"] == ["A\ufffd"]


def test_invalid_utf8_in_the_stream_is_a_stream_error():
    def body():
        yield chunk({"role": "assistant", "content": ""})
        yield b'data: {"choices": [{"index": 0, "delta": {"content": "\xff\xfe\xc3"}}]}\n\n'
        yield finish()
    with HostileModel(body) as server:
        result = _run(server.base_url)
    _one_line(result, "MODEL_STREAM")


# -- item 6: the content of one turn is capped --------------------------------------------

def test_a_gigabyte_stream_is_cut_at_the_cap_with_bounded_memory_and_the_text_kept(tmp_path):
    piece = chunk({"content": "x" * 65536})
    budget = 1024 ** 3 // len(piece)  # a gigabyte at most, however the client behaves

    def body():
        yield chunk({"role": "assistant", "content": ""})
        for _ in range(budget):
            yield piece
        yield finish()

    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with HostileModel(body) as server, open(out, "w") as stdout, open(err, "w") as stderr:
        child = subprocess.Popen(
            [REAL_DSH, "run", "--base-url", server.base_url, "-m", "m", "--no-input", "hi"],
            stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, env=_env())
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak RSS
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait
        sent = server.sent
    peak_kib = usage.ru_maxrss
    result = subprocess.CompletedProcess(child.args, child.returncode,
                                         out.read_text(), err.read_text())
    line = _one_line(result, "MODEL_STREAM")
    assert "more than 16,777,216 characters" in line
    assert sent < 256 * 1024 ** 2  # dsh hung up soon after the cap, not at the end
    print(f"peak RSS {peak_kib // 1024} MiB, {sent // 1024 ** 2} MiB sent")
    assert peak_kib < 512 * 1024, f"peak RSS {peak_kib} KiB"
    [*_, kept] = _stored_messages()
    assert kept["role"] == "assistant"
    assert 0 < len(kept["content"]) <= 16 * 1024 ** 2 and set(kept["content"]) == {"x"}


# -- item 8: the key never leaves through content or error text, in any case ---------------

def test_a_key_echoed_as_content_in_any_case_reaches_neither_stdout_nor_the_store(server):
    content = f"your key is {KEY} or {KEY.upper()} or {KEY.lower()}!"
    server.enqueue(Reply.text(content, chunk_size=3))  # the key split across many chunks
    result = _run(server.base_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "your key is [key] or [key] or [key]!\n"
    stored = json.dumps(_stored_messages())
    assert KEY.lower() not in stored.lower()


def test_a_key_echoed_in_another_case_in_an_error_is_scrubbed(server):
    server.default = Reply.error(401, f"bad key {KEY.upper()} (was {KEY.lower()})")
    result = _run(server.base_url)
    line = _one_line(result, "MODEL_AUTH")
    assert KEY.lower() not in line.lower() and "[key]" in line


def test_a_key_in_tool_arguments_is_masked_before_the_question_is_asked(server, tmp_path):
    question = {"id": "q1", "question": f"Is {KEY.upper()} yours?",
                "options": [{"label": "yes"}, {"label": "no"}]}
    server.enqueue(Reply.tool_calls([("ask_user_question", {"questions": [question]})]),
                   Reply.text("done"))
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"q1": ["no"]}), encoding="utf-8")
    result = _run(server.base_url, "--answers", str(answers))
    assert result.returncode == 0, result.stderr
    stored = json.dumps(_stored_messages())
    assert KEY.lower() not in stored.lower() and "Is [key] yours?" in stored


# -- item 10: an error body is cut before it is sanitised ----------------------------------

def test_a_huge_error_body_is_cut_before_it_is_sanitised(server, monkeypatch):
    import asyncio

    from dsh_cli.models import openai_compat
    from dsh_cli.models.base import ModelError

    seen: list[int] = []
    real = openai_compat.sanitize_line

    def measured(text: str) -> str:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(openai_compat, "sanitize_line", measured)
    server.default = Reply.error(400, "\x1b[31mno\x1b[0m " + "y" * 20_000_000)
    model = openai_compat.OpenAIChatModel(model="m", base_url=server.base_url, api_key=KEY)

    async def call() -> ModelError:
        try:
            async for _ in model.stream([{"role": "user", "content": "hi"}], []):
                pass
        except ModelError as error:
            return error
        finally:
            await model.aclose()
        raise AssertionError("the call did not fail")

    error = asyncio.run(call())
    assert error.code == "MODEL_BAD_REQUEST" and "no yyy" in error.message
    assert len(error.message) < 400 and "\x1b" not in error.message
    assert seen and max(seen) <= 2400, seen
