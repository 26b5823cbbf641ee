"""Whole processes, timed: wall time and the child's peak memory (``ru_maxrss``).

``run`` is for pipes; ``run_on_pty`` starts the child on a pseudo-terminal, times its first
frame (a known string appearing) and its exit after one key is sent.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PtyRun", "Run", "bench_env", "compile_dsh", "dsh_argv", "end_stdio_child",
           "python_argv", "run", "run_on_pty"]

ROWS, COLUMNS = 24, 80
CHECKOUT = Path(__file__).resolve().parents[1]  # the dsh measured: this checkout's


@dataclass
class Run:
    seconds: float
    max_rss_mb: float
    status: int
    stdout: bytes


@dataclass
class PtyRun:
    first_frame: float  # seconds from start until the expected text was read
    exit: float  # seconds from start until the child was reaped
    max_rss_mb: float
    status: int
    output: bytes


def dsh_argv(*args: str) -> list[str]:
    """The installed console script run by this interpreter (no pyenv shim in front)."""
    script = Path(sys.executable).with_name("dsh")
    if script.exists():
        return [sys.executable, str(script), *args]
    return [sys.executable, "-m", "dsh_cli", *args]


def python_argv(script: Path, *args: str) -> list[str]:
    return [sys.executable, str(script), *args]


def bench_env(home: Path) -> dict[str, str]:
    """Every child's environment: its own DSH_HOME, a known terminal, no CPR waits, and
    this checkout first on ``PYTHONPATH`` (the dsh measured is the one beside ``bench/``)."""
    paths = [str(CHECKOUT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = dict(os.environ, DSH_HOME=str(home), TERM="xterm-256color",
               PROMPT_TOOLKIT_NO_CPR="1", COLUMNS=str(COLUMNS), LINES=str(ROWS),
               PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)))
    for name in ("NO_COLOR", "PYTHONPROFILEIMPORTTIME", "PYTHONDEVMODE"):
        env.pop(name, None)
    return env


def compile_dsh() -> None:
    """Byte-compile this checkout's dsh, as pip does at install.

    The peers' modules come from site-packages with their bytecode; with
    ``PYTHONDONTWRITEBYTECODE`` set (as on the shared machine) dsh's ~40 modules were
    otherwise compiled from source in every run, some 20 ms of each first frame.
    """
    import compileall

    compileall.compile_dir(CHECKOUT / "dsh_cli", quiet=1)


def _status(wait_status: int) -> int:
    return os.waitstatus_to_exitcode(wait_status)


def run(argv: list[str], env: dict[str, str], stdin: bytes | None = None) -> Run:
    """Run to the end on pipes; stdin is written (then closed), stdout is kept."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    if stdin:
        process.stdin.write(stdin)
    process.stdin.close()
    stdout = process.stdout.read()
    process.stdout.close()
    _, wait_status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = _status(wait_status)  # reaped here, so Popen must not wait again
    return Run(seconds, usage.ru_maxrss / 1024, process.returncode, stdout)


def run_on_pty(argv: list[str], env: dict[str, str], expect: bytes, key: bytes,
               timeout: float = 20.0) -> PtyRun:
    """Start on a fresh pseudo-terminal; when ``expect`` shows, send ``key``; wait for exit."""
    import fcntl
    import pty
    import struct
    import termios

    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: size the terminal, then become the command
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    output = bytearray()
    first_frame = None
    deadline = started + timeout
    try:
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                os.kill(pid, 9)
                raise TimeoutError(f"{argv}: no {expect!r} within {timeout}s: {bytes(output)!r}")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: every copy of the terminal's other end is closed
                break
            if not chunk:
                break
            output += chunk
            if first_frame is None and expect in output:
                first_frame = time.perf_counter() - started
                os.write(fd, key)
        _, wait_status, usage = os.wait4(pid, 0)
        exited = time.perf_counter() - started
    finally:
        os.close(fd)
    if first_frame is None:
        raise RuntimeError(f"{argv}: exited before showing {expect!r}: {bytes(output)!r}")
    return PtyRun(first_frame, exited, usage.ru_maxrss / 1024, _status(wait_status),
                  bytes(output))


def end_stdio_child(process: subprocess.Popen[bytes]) -> None:
    """Close a stdio server's stdin (its way to end) and reap it, killed after 30 s."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
