"""The package as users get it: ``dsh --version``, a light start-up, a clean install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from harness.dsh_under_test import venv_seeing_this_environment

import dsh_cli
from dsh_cli.cli import main

ROOT = Path(__file__).resolve().parents[1]
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


def test_mcp_logout_forgets_a_login_without_importing_the_mcp_sdk(tmp_path, dsh_home):
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"prot": {"url": "http://Example.COM/mcp#x"}}}))
    tokens = dsh_home / "mcp-tokens.json"
    tokens.write_text(json.dumps({"http://example.com/mcp": {"tokens": {}}}))
    tokens.chmod(0o600)
    done = subprocess.run([sys.executable, "-c", START_UP, "mcp", "logout", "prot",
                           "--mcp-config", str(servers)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert "dsh: prot: logged out" in done.stderr, done.stderr[-300:]
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("MODULES "))
    modules = json.loads(line.removeprefix("MODULES "))
    assert [m for m in modules if m.split(".")[0] in ("mcp", "mcp_types")] == []  # ~0.6 CPU-s
    assert json.loads(tokens.read_text()) == {}  # the login under its canonical key is gone


def test_a_login_is_keyed_as_the_sdk_names_its_resource():
    from mcp.shared.auth_utils import resource_url_from_server_url

    from dsh_cli.mcp_client.auth.tokens import resource_of

    for url in ("HTTPS://Example.COM:8443/MCP?x=1#frag", "http://127.0.0.1:9/mcp",
                "https://a.example/mcp/"):
        assert resource_of(url) == resource_url_from_server_url(url)


def test_python_dash_m_is_the_same_program():
    done = subprocess.run([sys.executable, "-m", "dsh_cli", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"dsh, version {dsh_cli.__version__}"


def copy_source(destination: Path) -> Path:
    """The files a build needs, copied so the shared checkout gets no build/ or egg-info."""
    source = destination / "src"
    shutil.copytree(ROOT / "dsh_cli", source / "dsh_cli",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE", "setup.cfg", "MANIFEST.in"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, source / name)
    if (ROOT / "man").exists():
        shutil.copytree(ROOT / "man", source / "man")
    return source


def test_pip_install_into_a_fresh_venv(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)  # the installed copy, not this checkout
    # This environment's packages provide the dependencies, so nothing is downloaded.
    source = copy_source(tmp_path)
    env_dir = tmp_path / "venv"
    python = venv_seeing_this_environment(env_dir)
    bin_dir = python.parent
    environment = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", str(source)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=environment,
    )
    assert install.returncode == 0, install.stdout + install.stderr

    where = subprocess.run([str(python), "-c", "import dsh_cli; print(dsh_cli.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout

    dsh = bin_dir / "dsh"
    version = subprocess.run([str(dsh), "--version"], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"dsh, version {dsh_cli.__version__}"

    schema = subprocess.run([str(dsh), "schema"], capture_output=True, text=True, timeout=60,
                            cwd=tmp_path)
    assert schema.returncode == 0, schema.stderr
    assert json.loads(schema.stdout)["required"] == ["questions"]

    answer = subprocess.run([str(dsh), "schema", "--answer"], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["required"] == ["answers"]
