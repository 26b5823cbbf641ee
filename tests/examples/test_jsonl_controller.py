"""The example controller in examples/ runs against the installed dsh, as documented."""

from __future__ import annotations

import json
import shlex
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


def test_the_documented_commands_of_examples_readme_run_as_written():
    """Every ``python examples/...`` line of examples/README.md, from the checkout's root."""
    root = CONTROLLER.parents[1]
    readme = (root / "examples" / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.startswith("python examples/")]
    assert len(commands) == 2, commands
    for command in commands:
        argv = shlex.split(command)
        result = subprocess.run([sys.executable, *argv[1:]], cwd=root, capture_output=True,
                                text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, (command, result.stderr)
        assert result.stdout.startswith("? "), (command, result.stdout)
    scripted = subprocess.run([sys.executable, *shlex.split(commands[1])[1:]], cwd=root,
                              capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    assert scripted.stdout == ("? What should the project be called? -> acme\n"
                               "All set: I would create the project under the name you gave.\n")


def test_examples_readme_cites_only_what_exists():
    root = CONTROLLER.parents[1]
    readme = (root / "examples" / "README.md").read_text(encoding="utf-8")
    assert "spec/" not in readme
    for name in ("jsonl_controller.py", "turns.json"):
        assert (root / "examples" / name).is_file()
