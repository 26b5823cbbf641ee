"""What an entry runs inside the project (``mcp_client/config/runs.py``), read without running it.

In-process: each way of naming code is read as the process that starts would read it.
The process-boundary cases (changed code asks for trust again) are in
``test_project_trust.py``.
"""

from __future__ import annotations

from pathlib import Path

from dsh_cli.mcp_client.config.runs import entry_runs
from dsh_cli.mcp_client.config.servers import ServerConfig


def runs(project: Path, command: str, *args: str, env: dict[str, str] | None = None,
         cwd: str | None = None, environ: dict[str, str] | None = None):
    server = ServerConfig(name="s", source="x", command=command, args=args, env=env or {},
                          cwd=cwd)
    found = entry_runs(server, project.resolve(), project, environ or {"PATH": "/usr/bin"})
    return ({str(path.relative_to(project)) for path in found.files},
            {str(path.relative_to(project)) for path in found.trees}, found.gaps)


def touch(path: Path, text: str = "", mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_bare_command_is_found_on_the_entrys_own_path_as_exec_finds_it(tmp_path):
    touch(tmp_path / "first" / "srv")  # not executable: exec passes it over
    touch(tmp_path / "second" / "srv", mode=0o755)
    touch(tmp_path / "third" / "srv", mode=0o755)
    assert runs(tmp_path, "srv", env={"PATH": "./first:second:third"})[0] == {"second/srv"}
    # relative PATH entries count from the entry's own cwd, as the child's chdir makes them
    touch(tmp_path / "sub" / "bin" / "srv", mode=0o755)
    assert runs(tmp_path, "srv", env={"PATH": "bin"}, cwd="sub")[0] == {"sub/bin/srv"}
    # without env.PATH, dsh's own PATH (which a server inherits) decides
    assert runs(tmp_path, "srv", environ={"PATH": f"{tmp_path}/third"})[0] == {"third/srv"}
    assert runs(tmp_path, "srv")[0] == set()  # found outside the project: not its to cover


def test_python_m_covers_the_package_found_first_on_cwd_then_pythonpath(tmp_path):
    touch(tmp_path / "src" / "pkg" / "__init__.py")
    touch(tmp_path / "src" / "pkg" / "deep" / "x.py")
    assert runs(tmp_path, "python3", "-m", "pkg.deep.x")[1] == set()  # not on the path
    assert runs(tmp_path, "python3", "-m", "pkg.deep.x",
                env={"PYTHONPATH": "src"})[1] == {"src/pkg"}
    for flags in (["-um", "pkg"], ["-mpkg"], ["-X", "dev", "-m", "pkg"]):
        assert runs(tmp_path, "python3.12", *flags, env={"PYTHONPATH": "src"})[1] == {"src/pkg"}
    assert runs(tmp_path, "python3", "-I", "-m", "pkg", env={"PYTHONPATH": "src"})[1] == set()
    touch(tmp_path / "pkg.py")  # the cwd comes first: its module wins over src/pkg
    assert runs(tmp_path, "python3", "-m", "pkg", env={"PYTHONPATH": "src"})[:2] == (
        {"pkg.py"}, set())


def test_a_namespace_package_is_every_portion_unless_a_regular_one_wins(tmp_path):
    touch(tmp_path / "a" / "ns" / "one.py")
    touch(tmp_path / "b" / "ns" / "two.py")
    assert runs(tmp_path, "python", "-m", "ns.one",
                env={"PYTHONPATH": "a:b"})[1] == {"a/ns", "b/ns"}
    touch(tmp_path / "b" / "ns" / "__init__.py")
    assert runs(tmp_path, "python", "-m", "ns.one", env={"PYTHONPATH": "a:b"})[1] == {"b/ns"}


def test_python_runs_a_directory_whole_and_the_modules_a_c_string_imports(tmp_path):
    touch(tmp_path / "srvdir" / "__main__.py")
    assert runs(tmp_path, "python3", "srvdir")[1] == {"srvdir"}
    touch(tmp_path / "srv.py")
    touch(tmp_path / "config.py")
    touch(tmp_path / "tool" / "__init__.py")
    files, trees, _ = runs(tmp_path, "python3", "-c",
                           "import srv, os; from tool.x import y; exec(open('config.py').read())")
    assert files == {"srv.py", "config.py"} and trees == {"tool"}


def test_a_shell_string_is_read_command_by_command(tmp_path):
    touch(tmp_path / "srv.py")
    touch(tmp_path / "sub" / "run.py")
    touch(tmp_path / "sub" / "bin" / "tool", mode=0o755)
    touch(tmp_path / "log")
    touch(tmp_path / "pkg" / "__init__.py")
    string = ("set -e; python3 -um pkg & exec python3 srv.py 2>>log\n"
              "cd sub && PATH=./bin tool | env -i python3 run.py")
    files, trees, gaps = runs(tmp_path, "bash", "-lc", string)
    assert files == {"srv.py", "sub/bin/tool", "sub/run.py"}  # log is written, not run
    assert trees == {"pkg"} and gaps == []
    assert runs(tmp_path, "sh", "-c", "sh -c 'python3 srv.py'")[0] == {"srv.py"}


def test_what_a_shell_string_expands_when_it_runs_is_said_not_covered(tmp_path):
    touch(tmp_path / "srv.py")
    _, _, gaps = runs(tmp_path, "bash", "-c", "python3 srv.py $EXTRA")
    assert len(gaps) == 1 and "$" in gaps[0]
    _, _, gaps = runs(tmp_path, "bash", "-c", "python3 'srv.py")
    assert len(gaps) == 1 and "cannot be split" in gaps[0]
    assert runs(tmp_path, "bash", "script-not-c.sh")[2] == []


def test_a_scripts_imports_are_followed_through_module_files_beside_it(tmp_path):
    touch(tmp_path / "tools" / "srv.py", "import helper\nimport json\n")
    touch(tmp_path / "tools" / "helper.py", "from deeper import x\nPATH = 'notes.db'\n")
    touch(tmp_path / "tools" / "deeper.py")
    touch(tmp_path / "tools" / "notes.db")  # data a module names: not code, not covered
    touch(tmp_path / "tools" / "unused.py")
    touch(tmp_path / "lib" / "shared" / "__init__.py")
    touch(tmp_path / "mod.py", "import shared\n")
    files, trees, _ = runs(tmp_path, "python3", "tools/srv.py")
    assert files == {"tools/srv.py", "tools/helper.py", "tools/deeper.py"} and trees == set()
    # -m of a module file: its imports too, found on PYTHONPATH as well
    files, trees, _ = runs(tmp_path, "python3", "-m", "mod", env={"PYTHONPATH": "lib"})
    assert files == {"mod.py"} and trees == {"lib/shared"}
    assert runs(tmp_path, "python3", "-P", "tools/srv.py")[0] == {"tools/srv.py"}


def test_a_project_script_is_read_through_its_shebang(tmp_path):
    touch(tmp_path / "pkg" / "__init__.py")
    touch(tmp_path / "helper.py")
    touch(tmp_path / "run.sh", "#!/usr/bin/env bash\n# it's the server: don't touch\n"
          "if [ -f x ]; then :; fi\nexec python3 -m pkg  # the package\n", mode=0o755)
    files, trees, gaps = runs(tmp_path, "./run.sh")
    assert files == {"run.sh"} and trees == {"pkg"} and gaps == []
    assert runs(tmp_path, "sh", "run.sh")[1] == {"pkg"}  # a shell given the script
    touch(tmp_path / "srv.py", "#!/usr/bin/env -S python3 -u\nimport helper\n", mode=0o755)
    assert runs(tmp_path, "./srv.py")[0] == {"srv.py", "helper.py"}
    touch(tmp_path / "loop.sh", "#!/bin/sh\nexec ./loop.sh\n", mode=0o755)
    assert "deeper" in runs(tmp_path, "./loop.sh")[2][0]  # a script running itself ends
