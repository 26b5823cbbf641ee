"""Every shell example of the README and of the man page's EXAMPLES runs as written.

What runs: each README code block fenced ```sh, and each ``.EX``/``.EE`` block of the man
page's EXAMPLES section, in document order, with bash, in one temporary directory and one
``DSH_HOME`` per document (so ``dsh run -c`` continues the run before it), and as on a
fresh machine: no model configured and no API key, so an example that needs the offline
demo model says ``-m demo`` itself, as a reader pasting it must.

To keep a README block from running (a config snippet, output, another shell), fence it
with another info string: ```toml, ```json, ```text, ```zsh, ```fish. Blocks added later
are picked up by this test without any change here.

Blocks that ask on a terminal (``dsh ask`` without ``--answers``, ``--jsonl`` or
``--plain``) run in a pseudo-terminal answered by the keys in ``KEYS``; a block that cannot
run offline is listed in ``NOT_RUN`` with the reason the test prints.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from docs_reading import MAN_PAGE, README, roff_to_text

# first line of a block -> why it is not run (printed; a stale entry fails the test)
NOT_RUN = {
    "python3 -m venv ~/.venvs/dsh": "the install command: it fetches packages from the network",
    # run with a HOME of its own by tests/docs/test_readme.py
    "mkdir -p ~/.local/bin": "links into your own ~/.local/bin",
    "bash .ci/run": "the developer commands: they install system tools and run this suite",
    "tmux new-session": "needs tmux and Claude Code, and a human at the desk",
    "export DSH_API_KEY": "needs a real API key and the network",
    # run with a TCP forwarder standing in for ssh by tests/agents/test_remote_desk.py
    "# on your machine": "needs a second machine, ssh, and a human at the desk",
    # the web desk itself is run by tests/desk/test_web_desk_browser.py
    "ssh -t -L 8765": "needs a second machine, ssh, and a human at the browser",
    # run as written by tests/docs/test_readme_form_answers.py, in a copy of examples/
    "# answers for the deploy server's form": "runs from a clone's examples/ (run there)",
    # the hub's path (tokens, serve, dsh mcp --hub, dsh attach --hub) is run by tests/hub/
    "# 1. on the hub's host": "needs three machines, Claude Code and a human at the desk",
}
# a command that asks on the terminal -> (what appears on screen, the keys that answer it)
KEYS = {
    'dsh ask -q "Deploy to production?"': [("Deploy to production", "\r")],
    "dsh ask request.json": [("Which database", "\r"), ("Project name", "acme\r"),
                             ("Review", "\r")],
}
# the request file the README's `dsh ask request.json` reads (the man page writes its own)
REQUEST = """{"questions": [
  {"id": "db", "header": "Database", "question": "Which database?",
   "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]},
  {"id": "name", "question": "Project name?"}]}
"""
INTERACTIVE = re.compile(r"\bdsh ask\b(?![^\n]*--(?:answers|jsonl|plain))")
# a block that gives the questions an answer source must not leave them unanswered
ANSWER_SOURCE = re.compile(r"--(?:answers|jsonl|plain)\b|\bdsh ask\b")


@dataclass(frozen=True)
class Example:
    source: str  # "README.md block 3"
    code: str

    @property
    def first_line(self) -> str:
        return self.code.strip().splitlines()[0]


def readme_examples(text: str) -> list[Example]:
    blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.M | re.S)
    return [Example(f"README.md sh block {i + 1}", code) for i, code in enumerate(blocks)]


def man_examples(source: str) -> list[Example]:
    section = re.search(r"^\.SH EXAMPLES\n(.*?)(?=^\.SH )", source, flags=re.M | re.S)
    assert section, "man/dsh.1 has no EXAMPLES section"
    blocks = re.findall(r"^\.EX\n(.*?)^\.EE", section.group(1), flags=re.M | re.S)
    return [Example(f"dsh.1 EXAMPLES block {i + 1}", roff_to_text(code))
            for i, code in enumerate(blocks)]


def readme_answers_file(text: str) -> str:
    """The answers file the README shows (its ```json block after "An answers file")."""
    found = re.search(r"An answers file maps.*?^```json\n(.*?)^```", text, flags=re.M | re.S)
    assert found, "the README no longer shows an answers file"
    return found.group(1)


def workdir(tmp_path: Path, answers: str | None) -> Path:
    """A git repository with an uncommitted change, a deploy.sh and the files examples read."""
    folder = tmp_path / "work"
    folder.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    (folder / "TODO").write_text("- write the docs\n")
    subprocess.run([*git, "init", "-q"], cwd=folder, check=True)
    subprocess.run([*git, "add", "TODO"], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=folder, check=True)
    (folder / "TODO").write_text("- write the docs\n- run the examples\n")
    deploy = folder / "deploy.sh"
    deploy.write_text("#!/bin/sh\necho deployed\n")
    deploy.chmod(0o755)
    (folder / "request.json").write_text(REQUEST)
    if answers is not None:
        (folder / "answers.json").write_text(answers)
    return folder


def snapshot(folder: Path) -> dict[Path, int]:
    """The files an example may have written (not the git repository's own), by mtime."""
    return {path: path.stat().st_mtime_ns for path in folder.iterdir() if path.is_file()}


def environment(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DSH_", "DEEPSEEK_", "OPENAI_"))}
    env.update(DSH_HOME=str(home), NO_COLOR="1", TERM="xterm")
    return env


def run_piped(example: Example, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(["bash", "-e", "-c", example.code], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    return done.returncode, done.stdout + done.stderr


def run_in_terminal(example: Example, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    import pexpect

    commands = sorted((example.code.index(command), command) for command in KEYS
                      if command in example.code)
    assert commands, (f"{example.source} asks on the terminal: add the keys that answer "
                      f"{example.first_line!r} to KEYS")
    child = pexpect.spawn("bash", ["-e", "-c", example.code], cwd=str(cwd), env=env,
                          encoding="utf-8", dimensions=(30, 110), timeout=60)
    try:
        for _, command in commands:
            for screen, keys in KEYS[command]:
                child.expect(screen)
                child.send(keys)
        child.expect(pexpect.EOF)
    finally:
        child.close()
    output = (child.before or "") if isinstance(child.before, str) else ""
    return child.exitstatus if child.exitstatus is not None else 128, output


def run_all(examples: list[Example], tmp_path: Path, answers: str | None = None) -> None:
    cwd = workdir(tmp_path, answers)
    env = environment(tmp_path / "home")
    ran = 0
    for example in examples:
        skip = next((reason for start, reason in NOT_RUN.items()
                     if example.first_line.startswith(start)), None)
        if skip is not None:
            print(f"not run: {example.source} ({example.first_line}): {skip}")
            continue
        terminal = INTERACTIVE.search(example.code) is not None
        runner = run_in_terminal if terminal else run_piped
        before = snapshot(cwd)
        status, output = runner(example, cwd, env)
        written = "".join(path.read_text(errors="replace") for path, stamp in snapshot(cwd).items()
                          if before.get(path) != stamp)
        assert status == 0, f"{example.source} exited {status}:\n{example.code}\n---\n{output}"
        assert "Traceback" not in output, f"{example.source}:\n{output}"
        if ANSWER_SOURCE.search(example.code):
            assert "NO_PROVIDER" not in output + written, (
                f"{example.source} gives an answer source, yet a question went unanswered:\n"
                f"{example.code}\n---\n{output}{written}")
        print(f"ran{' in a terminal' if terminal else ''}: {example.source} ({example.first_line})")
        ran += 1
    assert ran, "no example ran"


def test_readme_examples_run(tmp_path):
    text = README.read_text(encoding="utf-8")
    run_all(readme_examples(text), tmp_path, answers=readme_answers_file(text))


def test_man_page_examples_run(tmp_path):
    run_all(man_examples(MAN_PAGE.read_text(encoding="utf-8")), tmp_path)


def test_every_not_run_entry_names_a_block():
    examples = (readme_examples(README.read_text(encoding="utf-8"))
                + man_examples(MAN_PAGE.read_text(encoding="utf-8")))
    for start in NOT_RUN:
        assert any(e.first_line.startswith(start) for e in examples), f"stale NOT_RUN: {start}"
    for command in KEYS:
        assert any(command in e.code for e in examples), f"stale KEYS: {command}"
