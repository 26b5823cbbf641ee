"""The man page lints clean with groff and mandoc, and `man dsh` works after `pip install`."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

import pytest
from docs_reading import MAN_PAGE, ROOT
from harness.dsh_under_test import venv_seeing_this_environment

SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "KEYS", "ANSWERS FILE",
            "JSON-LINES PROTOCOL", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES")


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (bash .ci/run installs it with apt-get)")
    return path


def test_groff_prints_no_warning():
    groff = need("groff")
    result = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(MAN_PAGE)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    assert result.stdout + result.stderr == ""


def test_mandoc_lint_passes_at_warning_level():
    mandoc = need("mandoc")
    result = subprocess.run([mandoc, "-Tlint", "-Wwarning", str(MAN_PAGE)],
                            capture_output=True, text=True, timeout=30)
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0


def test_json_in_the_page_keeps_its_quotes():
    """A ``"`` inside a macro's word is eaten by roff: JSON there must spell it ``\\(dq``."""
    groff = need("groff")
    text = subprocess.run([groff, "-man", "-Tutf8", "-P-c", "-P-u", "-P-b", "-rLL=200n",
                           str(MAN_PAGE)], capture_output=True, text=True, timeout=30).stdout
    flat = " ".join(text.split())
    for shape in ('{"error": {"name", "code", "message"}}',
                  '{"behavior": "allow", "updatedInput": input}'):
        assert shape in flat


def test_every_section_of_the_contract_is_present_in_order(man_source):
    headings = [line[4:].replace("\\-", "-").strip('"')
                for line in man_source.splitlines() if line.startswith(".SH ")]
    present = [heading for heading in headings if heading in SECTIONS]
    assert present == list(SECTIONS)


def test_the_page_source_is_ascii(man_source):
    """Non-ASCII is written as roff escapes, so every formatter reads the same glyphs."""
    assert man_source.isascii()


def can_build_a_wheel() -> bool:
    """Without build isolation, setuptools needs the wheel package (or setuptools >= 70.1)."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    from importlib.metadata import version

    major, minor = (int(part) for part in version("setuptools").split(".")[:2])
    return (major, minor) >= (70, 1)


def test_man_dsh_works_after_pip_install(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)  # the installed copy, not this checkout
    man = need("man")
    if not can_build_a_wheel():
        pytest.skip("pip cannot build dsh offline here: install wheel (pip install wheel)")
    # A copy of the sources, so the build leaves nothing in the shared checkout.
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    shutil.copytree(ROOT / "dsh_cli", source / "dsh_cli", ignore=ignore)
    shutil.copytree(ROOT / "man", source / "man")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    venv = tmp_path / "venv"
    python = venv_seeing_this_environment(venv)  # its build tools: setuptools, wheel
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--no-index", str(source)],
        capture_output=True, text=True, timeout=120,
    )
    assert install.returncode == 0, install.stderr

    installed = venv / "share" / "man" / "man1" / "dsh.1"
    assert installed.read_bytes() == MAN_PAGE.read_bytes()
    env = {key: value for key, value in os.environ.items() if key != "MANPATH"}
    env.update(MANPAGER="cat", PAGER="cat", MANWIDTH="80", LANG="C.UTF-8")
    by_path = subprocess.run([man, "-P", "cat", "-l", str(installed)], env=env,
                             capture_output=True, text=True, timeout=30)
    assert by_path.returncode == 0, by_path.stderr
    assert "dsh - an agent harness" in by_path.stdout
    assert "JSON-LINES PROTOCOL" in by_path.stdout
    # man finds a venv's pages through PATH (<prefix>/bin -> <prefix>/share/man).
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    by_name = subprocess.run([man, "dsh"], env=env, capture_output=True, text=True, timeout=30)
    assert by_name.returncode == 0, by_name.stderr
    assert "ANSWERS FILE" in by_name.stdout
    version = subprocess.run([str(venv / "bin" / "dsh"), "--version"], env=env,
                             capture_output=True, text=True, timeout=30)
    from dsh_cli import __version__

    assert __version__ in version.stdout


def section(name: str) -> str:
    """One section of the page as groff renders it, its words on one line."""
    groff = need("groff")
    text = subprocess.run([groff, "-man", "-Tutf8", "-P-c", "-P-u", "-P-b", "-rLL=200n",
                           "-rHY=0", str(MAN_PAGE)], capture_output=True, text=True,
                          timeout=30).stdout
    body = text.split(f"\n{name}\n", 1)[1]
    body = re.split(r"\n[A-Z][A-Z -]+\n", body, maxsplit=1)[0]
    return " ".join(body.split())


def test_files_names_every_config_key_and_notify_with_its_values_and_default():
    from dsh_cli.config import CONFIG_KEYS
    from dsh_cli.core.defaults import NOTIFY_CHOICES

    files = section("FILES")
    for key in CONFIG_KEYS:
        assert re.search(rf"\b{key}\b", files), f"FILES does not name config key {key}"
    notify = files.split("notify (", 1)[1].split(")", 1)[0]
    for value in NOTIFY_CHOICES:
        assert f'"{value}"' in notify, f"notify's values lack {value}: {notify}"
    assert "default auto" in notify, notify
    assert "notify_delay (seconds" in files and "default 30" in files


def test_environment_names_every_settings_variable():
    environment = section("ENVIRONMENT")
    for variable in ("DSH_NOTIFY_DELAY", "DSH_MODEL_TIMEOUT", "DSH_MODEL_DEADLINE",
                     "DSH_QUESTION_TIMEOUT"):
        assert variable in environment, f"ENVIRONMENT does not name {variable}"


def test_the_test_command_installs_dsh_so_that_man_dsh_keeps_working():
    """An editable install writes no data files (setuptools' editable wheel leaves out
    ``[tool.setuptools.data-files]``), and over a regular install it removes the page that
    install wrote: `.ci/run` installs this checkout regularly, the page with it."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    installs = [line for line in script.splitlines()
                if re.search(r"\bpip install\b", line) and not line.lstrip().startswith("#")
                and re.search(r"\s['\"]?\.(\[[\w,]+\])?['\"]?(\s|$)", line)]
    assert installs, ".ci/run no longer installs this checkout"
    for line in installs:
        assert not re.search(r"\s(-e|--editable)\s", line), f"an editable install: {line}"
