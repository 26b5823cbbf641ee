"""The README's tmux recipe opens the desk's pane from inside a tmux started outside the venv.

A tmux server keeps the environment it started with, and a command run inside one of its
panes splits the window of that pane unless told which: the recipe names its session and
dsh's full path. Its first line is run as written in a pane of such a server (a socket of
the test's own, a stand-in for ``claude``); the second one switches or attaches a terminal,
which a test has none of.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from docs_reading import README
from harness.dsh_under_test import DSH

FIRST = "tmux new-session"


def recipe() -> list[str]:
    blocks = re.findall(r"^```sh\n(.*?)^```", README.read_text(), flags=re.M | re.S)
    (found,) = [block.strip() for block in blocks if block.startswith(FIRST)]
    return found.splitlines()


def test_the_desk_pane_runs_dsh_from_inside_a_tmux_started_outside_the_venv(tmp_path):
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed (bash .ci/run installs it with apt-get)")
    socket = tmp_path / "tmux.sock"
    config = tmp_path / "tmux.conf"
    config.write_text("set -g remain-on-exit on\n")  # a pane that fails stays to be seen
    base = [tmux, "-S", str(socket), "-f", str(config)]
    outside = {**os.environ, "PATH": "/usr/bin:/bin"}  # the server knows no venv
    subprocess.run([*base, "new-session", "-d", "-s", "outside", "-x", "150", "-y", "40",
                    "bash --norc --noprofile"], env=outside, check=True, timeout=30)
    try:
        line = recipe()[0].replace("tmux ", f"{shlex.quote(tmux)} -S {shlex.quote(str(socket))} ")
        line = line.replace("'claude'", "'sleep 300'")
        venv = shlex.quote(str(Path(DSH).parent))
        subprocess.run([*base, "send-keys", "-t", "outside",
                        f"export PATH={venv}:$PATH; {line}", "Enter"], check=True, timeout=30)
        deadline = time.monotonic() + 60
        while True:
            panes = subprocess.run([*base, "list-panes", "-t", "work", "-F",
                                    "#{pane_index} #{pane_dead}"], capture_output=True,
                                   text=True, timeout=30).stdout.split("\n")
            screen = subprocess.run([*base, "capture-pane", "-p", "-t", "work:0.1"],
                                    capture_output=True, text=True, timeout=30).stdout
            assert "1 1" not in panes, f"the desk's pane ended:\n{screen}"
            if "desk listening" in screen and "pending" in screen:
                break
            assert time.monotonic() < deadline, f"no desk in the work session:\n{panes}"
            time.sleep(0.1)
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True, timeout=30)
