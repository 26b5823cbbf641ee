"""The offline demo shows an async question (no key): a message with "async" gets one, and
``/pending``, ``/discuss`` and ``/answer`` can be tried on it; its answer comes back as a
message the demo answers."""

from __future__ import annotations

import json
import subprocess

from harness.dsh_under_test import DSH

ANSWER = "answer (numbers, text for Other, /skip, /back, /cancel)> "


def test_the_demo_asks_async_and_the_answer_comes_back_as_a_message():
    lines = "show me async\n/discuss\n/pending\n/answer\n2\n/exit\n"
    done = subprocess.run([DSH, "chat", "--plain", "-m", "demo"], input=lines,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ticket = done.stdout.split("ticket ", 1)[1].split()[0].rstrip(")")
    assert "without waiting for the answer (an async question)" in done.stdout
    assert f"Asked (ticket {ticket}); I carry on meanwhile" in done.stdout
    assert "1 async question pending: /answer (or f2) to answer" in done.stdout
    assert f"  {ticket}  Which license should the project use?\n" in done.stdout  # /pending
    assert f"{ANSWER}/discuss\n> /pending\n> /answer\n" in done.stderr
    assert (f"Your answer to the license question arrived (ticket {ticket}): Apache-2.0."
            in done.stdout)


def test_the_demo_takes_its_async_answer_from_an_answers_file(tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"license": ["MIT"]}))
    run = subprocess.run([DSH, "run", "-m", "demo", "--answers", str(answers), "async please"],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Your answer to the license question arrived (ticket q_")
    assert "): MIT." in run.stdout and "still pending" not in run.stderr
