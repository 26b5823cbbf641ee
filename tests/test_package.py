"""The package as users get it: ``dsh --version``, a light start-up, a clean install."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

import dsh_cli
from dsh_cli.cli import main

HEAVY = ("prompt_toolkit", "pydantic", "openai", "starlette", "uvicorn", "sqlite3", "wcwidth")


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    result = CliRunner().invoke(main, [flag])
    assert result.exit_code == 0
    assert result.output.strip() == f"dsh, version {dsh_cli.__version__}"


def test_help_lists_the_commands():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("chat", "run", "ask", "schema"):
        assert command in result.output


START_UP = """
import json, sys
from dsh_cli.cli import main
try:
    main(sys.argv[1:], prog_name="dsh", standalone_mode=False)
except SystemExit:
    pass
sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_start_up_imports_nothing_heavy(flag):
    done = subprocess.run([sys.executable, "-c", START_UP, flag], capture_output=True,
                          text=True, check=True, timeout=60)
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("MODULES "))
    modules = json.loads(line.removeprefix("MODULES "))
    assert "click" in modules
    heavy = [m for m in modules if m.split(".")[0] in HEAVY]
    assert heavy == []
    assert done.stdout.strip()


def test_python_dash_m_is_the_same_program():
    done = subprocess.run([sys.executable, "-m", "dsh_cli", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"dsh, version {dsh_cli.__version__}"
