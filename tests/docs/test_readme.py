"""The README opens with its two set-up commands, and the completion it documents works."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from docs_reading import ROOT

USER_SETUP = ("python3 -m venv ~/.venvs/dsh && . ~/.venvs/dsh/bin/activate && pip install "
              "--require-hashes -r requirements.lock && pip install --no-deps --no-build-isolation "
              ". && dsh")
CLONE = "git clone <this repository's URL> dsh && cd dsh"
LINK = "mkdir -p ~/.local/bin && ln -sf ~/.venvs/dsh/bin/dsh ~/.local/bin/dsh"
TEST_SETUP = "bash .ci/run"


def test_the_readme_starts_with_its_title_a_sentence_and_the_two_commands(readme):
    """The user's command first, alone in its block (pasting it runs no test install), then
    the developers' test command in a block of its own; the clone (whose URL no command can
    know) is named in the prose between, and the PATH link comes after both."""
    lines = readme.splitlines()
    assert lines[0] == "# dsh"
    block = lines.index("```sh")
    sentence = " ".join(lines[2:block]).strip()
    assert sentence.endswith(".") and sentence.count(". ") == 0, sentence
    assert lines[block:block + 3] == ["```sh", USER_SETUP, "```"]
    second = lines.index("```sh", block + 3)
    between = " ".join(lines[block + 3:second])
    assert "3.11" in between and CLONE in between and "developers" in between
    # the package of that name on PyPI is another program: a newcomer must not take it
    assert "`pip install dsh`" in between and "different program" in between
    assert lines[second:second + 3] == ["```sh", TEST_SETUP, "```"]
    link = lines.index("```sh", second + 3)
    assert "PATH" in " ".join(lines[second + 3:link])
    assert lines[link:link + 3] == ["```sh", LINK, "```"]
    path_note = " ".join(lines[link + 3:link + 9])
    assert 'export PATH="$HOME/.local/bin:$PATH"' in path_note
    assert second < lines.index("## A short tour")


def test_the_link_command_works_on_a_fresh_account(tmp_path):
    """No ~/.local/bin yet (a new account): the README's line makes it, and the link works."""
    home = tmp_path / "home"
    venv_bin = home / ".venvs" / "dsh" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "dsh").write_text("#!/bin/sh\necho dsh here\n")
    (venv_bin / "dsh").chmod(0o755)
    for _ in range(2):  # and again: running it twice is no error
        done = subprocess.run(["bash", "-e", "-c", LINK], env={**os.environ, "HOME": str(home)},
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
    ran = subprocess.run([str(home / ".local" / "bin" / "dsh")], capture_output=True,
                         text=True, timeout=30)
    assert ran.stdout == "dsh here\n"


def test_the_readme_names_every_tool_the_test_command_installs_and_how_long_it_takes(readme):
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    tools = re.findall(r"missing\+=\(([\w-]+)\)", script)
    assert "zsh" in tools and "groff" in tools
    paragraph = " ".join(readme.split("\nbash .ci/run\n```\n", 1)[1].split("\n\n", 1)[0].split())
    for tool in tools:
        name = "Chromium" if tool == "chromium" else tool
        assert name in paragraph, f"the README's test command paragraph does not name {name}"
    assert "about 8 minutes on an idle 2-core machine" in paragraph


def test_the_test_command_runs_pytest():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install" in script and "-m pytest" in script


def dsh(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The ``dsh`` console script's entry point, run with extra environment."""
    # Named "dsh" as the console script names it: Click derives _DSH_COMPLETE from the name.
    return subprocess.run(
        [sys.executable, "-c", "from dsh_cli.cli import main; main(prog_name='dsh')"],
        env={**os.environ, **env_extra}, capture_output=True, text=True, timeout=30,
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_documented_completion_source_is_printed(readme, shell):
    assert f"_DSH_COMPLETE={shell}_source dsh" in readme
    result = dsh({"_DSH_COMPLETE": f"{shell}_source"})
    assert result.returncode == 0, result.stderr
    assert "_DSH_COMPLETE" in result.stdout


def test_bash_completion_completes_commands_and_options():
    words = dsh({"_DSH_COMPLETE": "bash_complete", "COMP_WORDS": "dsh ru", "COMP_CWORD": "1"})
    assert re.search(r"^plain,run$", words.stdout, re.M), words.stdout
    flags = dsh({"_DSH_COMPLETE": "bash_complete", "COMP_WORDS": "dsh run --ans",
                 "COMP_CWORD": "2"})
    assert re.search(r"^plain,--answers$", flags.stdout, re.M), flags.stdout


def test_the_config_sample_warns_that_its_model_turns_off_the_demo(readme, tmp_path):
    """Copied as it is, the sample's `model` makes `dsh` stop for a key: the sample says so."""
    from harness.dsh_under_test import DSH

    (sample,) = re.findall(r"^```toml\n(.*?)^```", readme, flags=re.M | re.S)[:1]
    assert re.search(r"^model = ", sample, flags=re.M)
    assert re.search(r"^#.*turns off the offline demo", sample, flags=re.M), sample
    (tmp_path / "config.toml").write_text(sample)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DSH_", "DEEPSEEK_", "OPENAI_"))}
    env["DSH_HOME"] = str(tmp_path)
    done = subprocess.run([DSH], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    assert "MISSING_API_KEY" in done.stderr, done.stderr  # not the demo


def test_the_developer_map_names_every_package_and_top_level_module(readme):
    """The README's map of ``dsh_cli/`` (under Development) has one line per subpackage
    (``core/``) and top-level module (``runtime.py``): one added, renamed or gone fails."""
    section = readme.split("## Development", 1)[1]
    tree = section.split("```\ndsh_cli/\n", 1)[1].split("```", 1)[0]
    mapped = re.findall(r"^  (\w+(?:\.py|/)) ", tree, flags=re.MULTILINE)
    package = ROOT / "dsh_cli"
    held = [path.name for path in package.glob("*.py")
            if path.name not in ("__init__.py", "__main__.py")]
    held += [f"{path.name}/" for path in package.iterdir() if (path / "__init__.py").is_file()]
    missing, gone = sorted(set(held) - set(mapped)), sorted(set(mapped) - set(held))
    assert (missing, gone) == ([], []), f"the map lacks {missing}; it names {gone}, now gone"
    assert len(mapped) == len(set(mapped)), "the map names one entry twice"
