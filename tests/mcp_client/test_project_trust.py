"""Where MCP servers come from, and what trusting a project's ``.mcp.json`` covers.

In-process for the order and the store; across the real process boundary (``dsh mcp
list`` as a subprocess, a racing writer process, a changed script) for what really starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH

from dsh_cli.core.errors import ConfigError
from dsh_cli.mcp_client.config.configured import configured_servers


def write(path, data=None):
    path.write_text(json.dumps(data or {"mcpServers": {}}))
    return path


def names(servers):
    return [(server.name, server.source) for server in servers]


def test_user_file_then_trusted_project_then_flags_in_override_order(tmp_path):
    config, project = tmp_path / "config", tmp_path / "project"
    config.mkdir(), project.mkdir()
    user = write(config / "mcp.json", {"mcpServers": {"a": {"command": "u"},
                                                      "b": {"command": "u"}}})
    local = write(project / ".mcp.json", {"mcpServers": {"b": {"command": "p"},
                                                         "c": {"command": "p"}}})
    flag = write(tmp_path / "extra.json", {"mcpServers": {"c": {"command": "f"}}})
    notices = []
    servers = configured_servers([str(flag)], project=True, cwd=project, config_dir=config,
                                 notice=notices.append, environ={})
    assert names(servers) == [("a", str(user)), ("b", str(local)), ("c", str(flag))]
    assert notices == []
    trust = config / "trusted-projects.json"
    assert os.stat(trust).st_mode & 0o777 == 0o600
    assert str(project.resolve()) in json.loads(trust.read_text())["projects"]


def test_an_untrusted_or_changed_project_file_is_left_out_with_one_notice(tmp_path):
    config, project = tmp_path / "config", tmp_path / "project"
    config.mkdir(), project.mkdir()
    write(project / ".mcp.json", {"mcpServers": {"x": {"command": "good"}}})
    notices = []
    assert configured_servers([], project=False, cwd=project, config_dir=config,
                              notice=notices.append) == []
    assert len(notices) == 1 and "--mcp-project" in notices[0]
    configured_servers([], project=True, cwd=project, config_dir=config)
    (trusted,) = configured_servers([], project=False, cwd=project, config_dir=config)
    assert trusted.command == "good"
    write(project / ".mcp.json", {"mcpServers": {"x": {"command": "evil"}}})
    notices.clear()
    assert configured_servers([], project=False, cwd=project, config_dir=config,
                              notice=notices.append) == []
    assert len(notices) == 1


def test_nothing_configured_is_no_servers_and_a_corrupt_trust_store_trusts_nothing(tmp_path):
    assert configured_servers([], project=False, cwd=tmp_path, config_dir=tmp_path) == []
    (tmp_path / "trusted-projects.json").write_text("not json")
    write(tmp_path / ".mcp.json", {"mcpServers": {"x": {"command": "x"}}})
    assert configured_servers([], project=False, cwd=tmp_path, config_dir=tmp_path) == []


def test_an_untrusted_broken_project_file_is_a_notice_and_a_trusted_one_an_error(tmp_path):
    (tmp_path / ".mcp.json").write_text("{nope")
    notices = []
    assert configured_servers([], project=False, cwd=tmp_path, config_dir=tmp_path,
                              notice=notices.append) == []
    assert len(notices) == 1
    with pytest.raises(ConfigError, match="not valid JSON"):
        configured_servers([], project=True, cwd=tmp_path, config_dir=tmp_path)


def test_a_file_trusted_before_scripts_were_covered_stays_trusted(tmp_path):
    """A project whose servers run nothing inside it keeps its old digest: the file's own."""
    import hashlib

    data = json.dumps({"mcpServers": {"x": {"command": "mcp-server-time"}}}).encode()
    (tmp_path / ".mcp.json").write_bytes(data)
    (tmp_path / "trusted-projects.json").write_text(json.dumps({"projects": {
        str(tmp_path.resolve()): {"digest": hashlib.sha256(data).hexdigest(), "at": "x"}}}))
    (tmp_path / "trusted-projects.json").chmod(0o600)  # as dsh writes it: others' is refused
    assert len(configured_servers([], project=False, cwd=tmp_path, config_dir=tmp_path)) == 1


def test_a_link_inside_the_project_is_covered_by_what_it_points_to(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "elsewhere.sh"
    project.mkdir()
    outside.write_text("echo good\n")
    (project / "server.sh").symlink_to(outside)
    write(project / ".mcp.json", {"mcpServers": {"x": {"command": "./server.sh"}}})
    assert configured_servers([], project=True, cwd=project, config_dir=tmp_path)
    assert configured_servers([], project=False, cwd=project, config_dir=tmp_path)
    outside.write_text("echo EVIL\n")
    assert configured_servers([], project=False, cwd=project, config_dir=tmp_path) == []


def test_more_bytes_than_the_cap_are_not_read_and_trust_is_for_one_run(tmp_path, monkeypatch):
    from dsh_cli.mcp_client.config import project

    monkeypatch.setattr(project, "TRUST_BYTES", 1024)  # stands for 64 MiB: read no further
    (tmp_path / "big.sh").write_bytes(b"#" * 4096)
    write(tmp_path / ".mcp.json", {"mcpServers": {"x": {"command": "./big.sh"}}})
    notices: list[str] = []
    assert configured_servers([], project=True, cwd=tmp_path, config_dir=tmp_path,
                              notice=notices.append)
    assert len(notices) == 1 and "over 0 MiB" not in notices[0], notices
    assert "for this run only" in notices[0]
    notices.clear()
    assert configured_servers([], project=False, cwd=tmp_path, config_dir=tmp_path,
                              notice=notices.append) == []
    assert len(notices) == 1 and "not trusted" in notices[0]


# --- across the process boundary -------------------------------------------------------


def mcp_list(cwd: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DSH, "mcp", "list", *flags], capture_output=True, text=True,
                          timeout=60, cwd=cwd, stdin=subprocess.DEVNULL)


def marker_command(marker: Path) -> dict[str, object]:
    """A stdio "server" that leaves ``marker`` behind when it is started, then exits."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'a').close()"]}


def test_trust_covers_a_script_inside_the_project_and_a_changed_one_asks_again(tmp_path):
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    ran = tmp_path / "ran"
    server = project / "server.sh"
    server.write_text(f"#!/bin/sh\necho good >> {ran}\n")
    server.chmod(0o755)
    (project / "tools" / "srv.py").write_text(f"open({str(ran)!r}, 'a').write('py good\\n')\n")
    write(project / ".mcp.json", {"mcpServers": {
        "sh": {"command": "./server.sh"},
        "py": {"command": sys.executable, "args": ["tools/srv.py"]}}})
    # the marker "servers" exit at once: they ran, and did not start as servers (status 1)
    assert mcp_list(project, "--mcp-project").returncode == 1
    assert sorted(ran.read_text().split("\n")) == ["", "good", "py good"]
    ran.unlink()
    trusted = mcp_list(project)
    assert "not trusted" not in trusted.stderr and ran.exists()  # unchanged: still trusted
    for changed, evil in ((server, f"#!/bin/sh\necho EVIL >> {ran}\n"),
                          (project / "tools" / "srv.py",
                           f"open({str(ran)!r}, 'a').write('py EVIL\\n')\n")):
        ran.unlink(missing_ok=True)
        original = changed.read_text()
        changed.write_text(evil)
        listed = mcp_list(project)
        assert listed.returncode == 0, listed.stderr
        assert not ran.exists(), changed  # the changed script never ran
        assert "not trusted" in listed.stderr and "--mcp-project" in listed.stderr
        changed.write_text(original)


RACER = textwrap.dedent("""
    import os, sys, time
    target, good, evil, stop = sys.argv[1:5]
    flip = 0
    while not os.path.exists(stop):
        staged = target + ".tmp"
        with open(staged, "w") as file:
            file.write(evil if flip else good)
        os.replace(staged, target)
        flip ^= 1
        time.sleep(0.0005)
""")


def test_a_racing_writer_never_gets_the_evil_command_started_under_the_trusted_digest(
        tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    evil_ran = tmp_path / "evil-ran"
    good = json.dumps({"mcpServers": {"s": marker_command(tmp_path / "good-ran")}})
    evil = json.dumps({"mcpServers": {"s": marker_command(evil_ran)}})
    target = project / ".mcp.json"
    target.write_text(good)
    assert mcp_list(project, "--mcp-project").returncode == 1  # the marker exits at once
    stop = tmp_path / "stop"
    racer = subprocess.Popen([sys.executable, "-c", RACER, str(target), good, evil, str(stop)])
    try:
        deadline = time.monotonic() + 40
        runs = 0
        while runs < 12 and time.monotonic() < deadline:
            mcp_list(project)
            runs += 1
            assert not evil_ran.exists(), f"the evil command started on run {runs}"
    finally:
        stop.touch()
        racer.wait(timeout=10)
    assert runs >= 4 and (tmp_path / "good-ran").exists()


# --- what an entry runs: issue 38 item 4 -------------------------------------------------

PYTHON3 = str(Path(sys.executable).with_name("python3"))


def writes(ran: Path, word: str) -> str:
    """Python source that appends ``word`` to ``ran`` (a "server" that leaves a mark)."""
    return f"open({str(ran)!r}, 'a').write({word + chr(10)!r})\n"


def python_module(project: Path, ran: Path) -> tuple[dict[str, object], list[Path]]:
    """``python3 -m pkg``: ``pkg/__main__.py`` runs ``pkg/impl.py``, found from the cwd."""
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "__main__.py").write_text("from pkg import impl\n")
    (project / "pkg" / "impl.py").write_text(writes(ran, "good"))
    return ({"command": PYTHON3, "args": ["-m", "pkg"]},
            [project / "pkg" / "impl.py", project / "pkg" / "__main__.py"])


def python_directory(project: Path, ran: Path) -> tuple[dict[str, object], list[Path]]:
    """``python3 srvdir/``: its ``__main__.py``, and a module beside it that it imports."""
    (project / "srvdir").mkdir()
    (project / "srvdir" / "__main__.py").write_text("import impl\n")
    (project / "srvdir" / "impl.py").write_text(writes(ran, "good"))
    return ({"command": PYTHON3, "args": ["srvdir/"]},
            [project / "srvdir" / "__main__.py", project / "srvdir" / "impl.py"])


def shell_string(project: Path, ran: Path) -> tuple[dict[str, object], list[Path]]:
    """``bash -c "exec python3 srv.py"``: the file the shell's string names."""
    (project / "srv.py").write_text(writes(ran, "good"))
    return {"command": "bash", "args": ["-c", "exec python3 srv.py"]}, [project / "srv.py"]


def own_path(project: Path, ran: Path) -> tuple[dict[str, object], list[Path]]:
    """A bare ``srv`` found through the entry's own ``env.PATH=./bin``, as exec finds it."""
    (project / "bin").mkdir()
    srv = project / "bin" / "srv"
    srv.write_text(f"#!/bin/sh\necho good >> {ran}\n")
    srv.chmod(0o755)
    return {"command": "srv", "env": {"PATH": "./bin"}}, [srv]


def script_imports(project: Path, ran: Path) -> tuple[dict[str, object], list[Path]]:
    """``python3 tools/srv.py``: a module beside the script that it imports."""
    (project / "tools").mkdir()
    (project / "tools" / "srv.py").write_text("import helper\n")
    (project / "tools" / "helper.py").write_text(writes(ran, "good"))
    return {"command": PYTHON3, "args": ["tools/srv.py"]}, [project / "tools" / "helper.py"]


def shell_script(project: Path, ran: Path) -> tuple[dict[str, object], list[Path]]:
    """``./server.sh`` whose ``exec python3 -m pkg`` runs the package's code."""
    _, files = python_module(project, ran)
    server = project / "server.sh"
    server.write_text(f"#!/bin/sh\n# don't wait: start it\ncd {project} && exec {PYTHON3} "
                      "-m pkg\n")
    server.chmod(0o755)
    return {"command": "./server.sh"}, files


@pytest.mark.parametrize("build", [python_module, python_directory, shell_string, own_path,
                                   script_imports, shell_script])
def test_trust_covers_what_an_entry_runs_and_changed_code_asks_again(tmp_path, build):
    project, ran = tmp_path / "project", tmp_path / "ran"
    project.mkdir()
    entry, files = build(project, ran)
    write(project / ".mcp.json", {"mcpServers": {"s": entry}})
    # the marker "server" exits at once: it ran, and did not start as a server (status 1)
    assert mcp_list(project, "--mcp-project").returncode == 1
    assert ran.read_text() == "good\n"
    ran.unlink()
    assert "not trusted" not in mcp_list(project).stderr and ran.exists()  # still trusted
    for changed in files:
        ran.unlink(missing_ok=True)
        original = changed.read_text()
        changed.write_text(original.replace("good", "EVIL") + "\n")
        listed = mcp_list(project)
        assert not ran.exists(), f"{changed} changed and ran: {ran.read_text()!r}"
        assert listed.returncode == 0, listed.stderr
        assert "not trusted" in listed.stderr and "--mcp-project" in listed.stderr
        changed.write_text(original)


def test_a_package_over_the_cap_is_trusted_for_one_run_only_and_never_remembered(tmp_path):
    from dsh_cli.core.limits import TRUST_FILES

    project, ran = tmp_path / "project", tmp_path / "ran"
    project.mkdir()
    entry, _ = python_module(project, ran)
    for index in range(TRUST_FILES):
        (project / "pkg" / f"data{index}.txt").write_bytes(b"")
    write(project / ".mcp.json", {"mcpServers": {"s": entry}})
    once = mcp_list(project, "--mcp-project")
    assert ran.read_text() == "good\n"  # the human trusted it for this run, knowingly
    assert once.stderr.count("\n") == 1 and "for this run only" in once.stderr, once.stderr
    ran.unlink()
    later = mcp_list(project)
    assert not ran.exists() and later.returncode == 0, later.stderr
    assert f"over {TRUST_FILES} files" in later.stderr and "--mcp-project" in later.stderr


def test_a_fifo_in_a_package_is_named_not_read_and_trust_holds(tmp_path):
    project, ran = tmp_path / "project", tmp_path / "ran"
    project.mkdir()
    entry, _ = python_module(project, ran)
    os.mkfifo(project / "pkg" / "pipe")  # reading it would wait for a writer forever
    write(project / ".mcp.json", {"mcpServers": {"s": entry}})
    assert mcp_list(project, "--mcp-project").returncode == 1 and ran.exists()
    ran.unlink()
    assert "not trusted" not in mcp_list(project).stderr and ran.exists()


def test_trusting_says_what_a_shell_string_leaves_uncovered(tmp_path):
    project, ran = tmp_path / "project", tmp_path / "ran"
    project.mkdir()
    (project / "srv.py").write_text(writes(ran, "good"))
    write(project / ".mcp.json", {"mcpServers": {"s": {
        "command": "bash", "args": ["-c", "exec python3 $SRV"], "env": {"SRV": "srv.py"}}}})
    trusted = mcp_list(project, "--mcp-project")
    assert ran.exists()
    assert trusted.stderr.count("\n") == 1, trusted.stderr
    assert "trusted, but server 's'" in trusted.stderr and "not covered" in trusted.stderr
