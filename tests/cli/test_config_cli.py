"""config.toml as the CLI reads it: unknown keys warned about, errors naming the file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

from dsh_cli.cli.options import QUESTION_TIMEOUT
from dsh_cli.config import TIMEOUT_OFF, config_warnings, load_settings


def config_file(text: str) -> Path:
    path = Path(os.environ["DSH_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_demo(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"stack": None, "features": None, "name": "x"}))
    return subprocess.run([DSH, "run", "-m", "demo", "--answers", str(answers), *args, "hi"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_an_unknown_key_warns_naming_key_file_and_close_match(tmp_path):
    path = config_file('modle = "demo"\n')
    result = run_demo(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (f'dsh: warning: {path}: unknown key "modle" ignored (did you mean "model"?)'
            in result.stderr.splitlines())


def test_a_value_error_names_the_file(tmp_path):
    path = config_file('notify = "siren"\n')
    result = run_demo(tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"dsh: CONFIG_ERROR: {path}: notify must be one of")


def test_known_keys_give_no_warning():
    assert config_warnings({"model": "m", "question_timeout": 3, "notify": "none"}, "f") == []
    assert config_warnings({"zzz": 1}, "f") == ['dsh: warning: f: unknown key "zzz" ignored']


@pytest.mark.parametrize("text", ["0", "none", "None", "off"])
def test_question_timeout_zero_or_none_turns_a_configured_timeout_off(text):
    seconds = QUESTION_TIMEOUT.convert(text, None, None)
    assert seconds == TIMEOUT_OFF
    settings = load_settings(question_timeout=seconds, environ={"DSH_QUESTION_TIMEOUT": "4"},
                             config={"question_timeout": 5})
    assert settings.question_timeout is None
    assert load_settings(question_timeout=2.5, environ={}, config={}).question_timeout == 2.5


def test_question_timeout_off_through_the_cli(tmp_path):
    config_file("question_timeout = 5\n")
    assert run_demo(tmp_path, "--question-timeout", "none").returncode == 0
    bad = run_demo(tmp_path, "--question-timeout", "soon")
    assert bad.returncode == 2 and "0/none for no timeout" in bad.stderr
