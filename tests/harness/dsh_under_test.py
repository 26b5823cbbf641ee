"""The dsh under test: this checkout's, never whichever ``dsh`` comes first on PATH.

``DSH`` is the console script beside ``sys.executable`` when there is one, else a shim that
runs ``python -m dsh_cli``; ``prepare`` (called once by the root conftest) puts this checkout
first on ``PYTHONPATH`` and the script's folder first on ``PATH`` for every child, and checks
that a child really imports this checkout; ``compile_checkout`` byte-compiles it once for them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CLEARED", "DSH", "REAL_DSH", "ROOT", "compile_checkout", "own_home_env", "prepare",
           "start_fork_server", "stop_fork_server", "venv_seeing_this_environment"]

ROOT = Path(__file__).resolve().parents[2]


_HERE = Path(__file__).resolve().parent


def _scripts() -> Path:
    """``dsh`` (``harness/launcher.py``: a forked dsh, else the real start) beside ``dsh-real``."""
    folder = Path(tempfile.mkdtemp(prefix="dsh-under-test-"))
    launcher = folder / "dsh"
    launcher.write_text(f"#!{sys.executable} -IS\n"
                        + (_HERE / "launcher.py").read_text(encoding="utf-8"), encoding="utf-8")
    real = folder / "dsh-real"
    real.write_text(f"#!{sys.executable}\nimport sys\nsys.argv[0] = {str(launcher)!r}\n"
                    "from dsh_cli.cli import main\nsys.exit(main())\n",
                    encoding="utf-8")
    for script in (launcher, real):
        script.chmod(0o755)
    return launcher


DSH = str(_scripts())
# the real start, for a test that reads the dsh process itself (its /proc entry, its threads)
REAL_DSH = str(Path(DSH).with_name("dsh-real"))
# what no test inherits from the runner (conftest's ``dsh_home`` clears it for each test)
CLEARED = (
    "DSH_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_API_KEY",
    "DSH_MODEL",
    "DSH_BASE_URL",
    "DSH_QUESTION_TIMEOUT",
    "NO_COLOR",
    # a child in a pseudo-terminal measures its own width: a COLUMNS from the runner (or a
    # test before) would override it (shutil.get_terminal_size reads COLUMNS first)
    "COLUMNS",
    "LINES",
)


def own_home_env(home: Path) -> dict[str, str]:
    """A child's environment with ``home`` as its DSH_HOME and ``CLEARED`` left out: for a
    child a module-scoped fixture shares, started before any one test's ``dsh_home``."""
    env = {name: value for name, value in os.environ.items() if name not in CLEARED}
    env["DSH_HOME"] = str(home)
    return env


def prepare() -> None:
    """Every child process runs this checkout's dsh; fail loudly when it would not."""
    paths = [str(ROOT), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    folder = str(Path(DSH).parent)
    os.environ["PATH"] = os.pathsep.join([folder, os.environ.get("PATH", "")])
    where = subprocess.run(
        [sys.executable, "-c", "import dsh_cli; print(dsh_cli.__file__)"],
        capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=60,
    )
    imported = Path(where.stdout.strip() or "?").resolve()
    if not imported.is_relative_to(ROOT):
        raise RuntimeError(f"a child imports {imported}, not this checkout ({ROOT})")


def start_fork_server() -> subprocess.Popen[bytes] | None:
    """This process's fork server (``harness/forkserver.py``), which its children's ``dsh`` use.

    It imports in the background: a ``dsh`` started before its socket is there starts for real.
    ``DSH_TEST_REAL_STARTS=1`` turns it off, so that every dsh of the suite starts for real.
    """
    if os.environ.get("DSH_TEST_REAL_STARTS") == "1":
        os.environ.pop("DSH_TEST_FORKSERVER", None)
        return None
    socket_path = Path(DSH).with_name("forkserver.sock")
    os.environ["DSH_TEST_FORKSERVER"] = str(socket_path)
    return subprocess.Popen(
        [sys.executable, "-P", str(_HERE / "forkserver.py"), str(socket_path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd=tempfile.gettempdir())


def stop_fork_server(server: subprocess.Popen[bytes] | None) -> None:
    """End the fork server and any dsh of its still running; remove ``DSH``'s folder."""
    if server is not None:
        os.environ.pop("DSH_TEST_FORKSERVER", None)
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    import shutil

    shutil.rmtree(Path(DSH).parent, ignore_errors=True)


def compile_checkout() -> None:
    """Byte-compile this checkout's dsh once, as pip does at install (``bench.proc`` too).

    Where the environment turns bytecode off (``PYTHONDONTWRITEBYTECODE``, as on the shared
    machine), every dsh child of the suite, some thousands, otherwise compiled dsh's modules
    from source: about 0.07 s of CPU for each ``dsh mcp``. Children still write nothing.
    """
    if sys.dont_write_bytecode:
        import compileall

        compileall.compile_dir(ROOT / "dsh_cli", quiet=1)


def venv_seeing_this_environment(venv: Path) -> Path:
    """A venv (no pip of its own) that sees the packages of the Python running the tests.

    ``--system-site-packages`` alone sees the base interpreter's, which in a venv lack dsh's
    dependencies and may lack wheel; a .pth names this environment's site-packages instead.
    """
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=60)
    site = next((venv / "lib").glob("python3*/site-packages"))
    outer = [path for path in sys.path if path.endswith("site-packages")]
    (site / "outer-site-packages.pth").write_text("\n".join(outer) + "\n", encoding="utf-8")
    return venv / "bin" / "python"
