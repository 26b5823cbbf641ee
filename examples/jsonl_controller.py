#!/usr/bin/env python3
"""Drive ``dsh run --jsonl`` from another program: answer its questions, print the outcome.

The integration recipe for editors and bots, standard library only:

1. start ``dsh run --jsonl`` with pipes for stdin and stdout;
2. read one JSON event per line from its stdout;
3. answer each ``question/requested`` with a ``question/answer`` frame on its stdin,
   echoing ``rpc_id`` and ``session_id``;
4. after ``turn/completed``, send a ``user/message`` to go on, or close stdin to finish.

This controller picks the recommended option of each question (else the first one) and
types ``--text`` into questions without options. Try it offline:

    python examples/jsonl_controller.py "set up a new web service"
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from typing import Any


def choose(question: dict[str, Any], text: str) -> dict[str, Any]:
    """The answer this controller gives to one question."""
    labels = [option["label"] for option in question.get("options") or []]
    if not labels:
        return {"id": question["id"], "custom": text}
    recommended = [label for label in labels if label.endswith("(Recommended)")]
    picked = recommended or labels[:1]
    if not question.get("multi_select"):
        picked = picked[:1]
    return {"id": question["id"], "selected": picked}


def describe(item: dict[str, Any]) -> str:
    return item.get("custom") or ", ".join(item.get("selected", [])) or "(skipped)"


def dsh_command() -> list[str]:
    """``dsh`` from PATH, else this Python's ``-m dsh_cli``."""
    found = shutil.which("dsh")
    return [found] if found else [sys.executable, "-m", "dsh_cli"]


def control(command: list[str], prompt: str, text: str, model: str = "demo") -> int:
    """Run one conversation; prints each answer given and the final reply."""
    process = subprocess.Popen(
        [*command, "run", "--jsonl", "--model", model, prompt],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1,
    )
    assert process.stdin is not None and process.stdout is not None
    final = ""

    def send(frame: dict[str, Any]) -> None:
        process.stdin.write(json.dumps(frame) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    for line in process.stdout:
        event = json.loads(line)
        kind = event["type"]
        if kind == "question/requested":
            answers = [choose(question, text) for question in event["questions"]]
            for question, item in zip(event["questions"], answers, strict=True):
                print(f"? {question['question']} -> {describe(item)}")
            send({"type": "question/answer", "rpc_id": event["rpc_id"],
                  "session_id": event["session_id"], "answers": answers})
        elif kind == "response/ack" and not event["accepted"]:
            print(f"refused: {event['reason']}: {event['message']}", file=sys.stderr)
        elif kind == "assistant/message" and not event["tool_calls"]:
            final = event["content"]
        elif kind == "turn/completed":
            process.stdin.close()  # no more user messages: dsh finishes and exits
        elif kind == "error":
            print(f"dsh error: {event['code']}: {event['message']}", file=sys.stderr)
    status = process.wait()
    print(final)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt", nargs="?", default="set up a new web service")
    parser.add_argument("--text", default="acme", help="answer for free-text questions")
    parser.add_argument("--model", default="demo", help="model for dsh (default: demo)")
    parser.add_argument("--dsh", help="command that runs dsh (default: dsh on PATH)")
    args = parser.parse_args(argv)
    command = shlex.split(args.dsh) if args.dsh else dsh_command()
    return control(command, args.prompt, args.text, args.model)


if __name__ == "__main__":
    sys.exit(main())
