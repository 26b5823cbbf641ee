"""The example controller in examples/ runs against the installed dsh, as documented."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CONTROLLER = Path(__file__).resolve().parents[2] / "examples" / "jsonl_controller.py"


def control(*args):
    return subprocess.run([sys.executable, str(CONTROLLER), *args], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)


def test_example_controller_answers_the_demo_and_prints_the_outcome():
    result = control("set up a billing service")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "? Which stack should the project use? -> Python + FastAPI (Recommended)",
        "? Which features should the starter include? -> Auth",
        "? What should the project be called? -> acme",
    ]
    assert "Here is the plan for “set up a billing service”" in result.stdout
    assert "Next I would scaffold acme on Python + FastAPI with Auth." in result.stdout
    assert result.stderr == ""


def test_example_controller_with_a_scripted_model_and_free_text(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        {"content": "One question.", "tool_calls": [{"name": "ask_user_question", "arguments": {
            "questions": [{"id": "name", "question": "Name?"}]}}]},
        {"content": "All set."},
    ]}))
    result = control("--model", f"script:{script}", "--text", "zephyr", "go")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "? Name? -> zephyr\nAll set.\n"
