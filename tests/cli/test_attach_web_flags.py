"""``dsh attach --web`` takes ``--host`` and ``--open/--no-open`` as every other ``--web`` does."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH


def browser(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A BROWSER that writes the URL it was given to a file (Python's webbrowser runs it)."""
    seen = tmp_path / "opened"
    script = tmp_path / "browser"
    script.write_text(f'#!/bin/sh\nprintf %s "$1" > {seen}\n')
    script.chmod(0o755)
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["BROWSER"] = str(script)
    return seen, env


def start(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """The desk, and the URL it printed."""
    desk = subprocess.Popen([DSH, "attach", "--web", *args], env=env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert desk.stderr is not None
    for line in desk.stderr:
        if line.startswith("dsh: open http"):
            return desk, line.split("open ", 1)[1].strip()
    desk.wait(timeout=30)
    pytest.fail(f"the web desk printed no URL (exit {desk.returncode})")


def stop(desk: subprocess.Popen[str]) -> None:
    desk.send_signal(signal.SIGINT)
    assert desk.wait(timeout=30) == 130


def test_host_binds_there_and_open_opens_the_browser_on_the_url(tmp_path):
    seen, env = browser(tmp_path)
    desk, url = start(["--host", "127.0.0.2", "--open"], env)
    try:
        assert url.startswith("http://127.0.0.2:")
        deadline = time.monotonic() + 30
        while not (seen.exists() and seen.read_text()):
            assert time.monotonic() < deadline, "the browser was not opened"
            time.sleep(0.05)
        assert seen.read_text() == url
    finally:
        stop(desk)


def test_no_open_opens_nothing_even_with_a_display(tmp_path):
    seen, env = browser(tmp_path)
    env["DISPLAY"] = ":99"  # where the default would open one
    desk, url = start(["--no-open"], env)
    assert url.startswith("http://127.0.0.1:")
    stop(desk)  # an open would have run (and been waited for) before the process ended
    assert not seen.exists()


@pytest.mark.parametrize("flag", [["--host", "0.0.0.0"], ["--no-open"], ["--open"]])
def test_the_web_flags_need_web(flag):
    run = subprocess.run([DSH, "attach", *flag], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 2
    assert "needs --web" in run.stderr, run.stderr
