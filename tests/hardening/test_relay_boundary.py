"""What a controller sends across a real `dsh run --jsonl` boundary: lone surrogates,
over-long lines, over-long custom text. Each is a real child process and real pipes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH, REAL_DSH
from relay_peer import Peer, asking, script, stored_tool_results

from dsh_cli.interaction import LIMITS
from dsh_cli.providers.frames import MAX_FRAME_BYTES


@pytest.fixture
def peers():
    started: list[Peer] = []

    def start(*args: str, **kwargs) -> Peer:
        started.append(Peer(*args, **kwargs))
        return started[-1]

    yield start
    for peer in started:
        peer.kill()


def _answer(requested: dict, custom: str) -> str:
    return json.dumps({"type": "question/answer", "rpc_id": requested["rpc_id"],
                       "session_id": requested["session_id"],
                       "answers": [{"id": "name", "custom": custom}]})


def test_a_lone_surrogate_in_a_relay_answer_becomes_u_fffd_is_resolved_and_stored(
        peers, tmp_path):
    model = script(tmp_path / "s.json", asking(), {"content": "Done."})
    dsh = peers("run", "--jsonl", "--model", model, "hi")
    requested = dsh.until("question/requested")
    dsh.send(_answer(requested, "ac\ud800me"))  # json.dumps spells it \\ud800: valid JSON
    assert dsh.next() == {"type": "response/ack", "rpc_id": requested["rpc_id"],
                          "accepted": True}
    resolved = dsh.next()
    assert resolved["type"] == "question/resolved" and resolved["outcome"] == "answered"
    assert resolved["answer"]["answers"][0]["custom"] == "ac\ufffdme"
    result = dsh.until("tool/result")
    assert result["error"] is None
    dsh.until("turn/completed")
    assert dsh.finish() == 0
    (stored,) = stored_tool_results(requested["session_id"])
    assert json.loads(stored)["answers"][0]["custom"] == "ac\ufffdme"


def test_custom_text_over_the_cap_is_a_bad_response_and_the_question_stays_pending(
        peers, tmp_path):
    model = script(tmp_path / "s.json", asking(), {"content": "Done."})
    dsh = peers("run", "--jsonl", "--model", model, "hi")
    requested = dsh.until("question/requested")
    dsh.send(_answer(requested, "x" * (LIMITS["custom"] + 1)))
    ack = dsh.next()
    assert (ack["accepted"], ack["reason"]) == (False, "bad-response")
    assert ack["message"] == (f"answers[0].custom: custom text is longer than "
                              f"{LIMITS['custom']} characters ({LIMITS['custom'] + 1})")
    dsh.send(_answer(requested, "y" * LIMITS["custom"]))  # at the cap: still an answer
    assert dsh.next()["accepted"] is True
    assert dsh.next()["outcome"] == "answered"
    dsh.until("turn/completed")
    assert dsh.finish() == 0


# A small parent between the test and dsh: wait4's ru_maxrss also counts the memory of
# the process a child was forked from, and the test process is large.
_MEASURE = ("import os, subprocess, sys; child = subprocess.Popen(sys.argv[1:]); "
            "_, status, usage = os.wait4(child.pid, 0); "
            "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, file=sys.stderr)")


def _peak_run(tmp_path, *args: str) -> tuple[int, bytes, bytes, int]:
    """Exit status, stdout, stderr and peak RSS (KiB) of one `dsh run`."""
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        subprocess.run([sys.executable, "-c", _MEASURE, REAL_DSH, "run", *args],
                       stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, timeout=120,
                       check=True)
    *lines, measured = err.read_bytes().splitlines(keepends=True)
    status, peak_kib = (int(word) for word in measured.split())
    return status, out.read_bytes(), b"".join(lines), peak_kib


def test_a_50_mb_custom_answer_from_a_file_is_invalid_answer_and_never_stored(tmp_path):
    model = script(tmp_path / "s.json", asking(), {"content": "Done."})
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"name": "z" * 50_000_000}), encoding="utf-8")
    status, out, err, peak_kib = _peak_run(tmp_path, "--no-input", "--model", model,
                                           "--answers", str(answers), "hi")
    print(f"peak RSS with a 50 MB custom answer: {peak_kib // 1024} MiB")
    assert status == 0, err
    assert peak_kib < 200 * 1024  # before the cap: 276 MiB, the text kept and stored
    assert out == b"Done.\n"
    assert err.decode().endswith(": bad answer for name.custom: custom text is longer than "
                                 f"{LIMITS['custom']} characters (50000000)\n")
    listed = subprocess.run([DSH, "sessions", "list", "--json"], capture_output=True,
                            text=True, timeout=30, check=True)
    (stored,) = stored_tool_results(json.loads(listed.stdout)[0]["id"])
    assert len(stored) < 1000 and "INVALID_ANSWER" in stored


def test_a_200_mb_line_is_cut_at_the_frame_cap_with_bounded_memory_and_the_relay_goes_on(
        peers, tmp_path):
    model = script(tmp_path / "s.json", asking(), {"content": "Done."})
    dsh = peers("run", "--jsonl", "--model", model, "hi", real_start=True)
    requested = dsh.until("question/requested")
    piece = b"y" * 1_000_000
    for _ in range(200):  # 200 MB, no newline: a controller gone wrong
        dsh.process.stdin.write(piece)
    error = dsh.next()
    assert error == {"type": "error", "code": "BAD_FRAME", "message":
                     f"a frame is at most {MAX_FRAME_BYTES} bytes: the rest of this line "
                     "is skipped"}
    dsh.send(b"")  # the end of the long line
    dsh.send(_answer(requested, "acme"))
    assert dsh.next()["accepted"] is True
    assert dsh.next()["outcome"] == "answered"
    dsh.until("turn/completed")
    # VmHWM of the running child: after exec it is this program's own peak (wait4's
    # ru_maxrss would also count the test process it was forked from)
    status_text = Path(f"/proc/{dsh.process.pid}/status").read_text()
    peak_kib = int(re.search(r"VmHWM:\s+(\d+) kB", status_text)[1])
    print(f"peak RSS (VmHWM) after a 200 MB line: {peak_kib // 1024} MiB")
    assert dsh.finish() == 0
    assert peak_kib < 150 * 1024  # the line was never held
    assert len([e for e in dsh.events if e["type"] == "error"]) == 1
