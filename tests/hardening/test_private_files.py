"""The approvals and token files under several processes at once, and hostile ones.

Real processes, not threads: children of this checkout change ``permissions.json`` and
``mcp-tokens.json`` at the same moment (what two desks, ``dsh mcp`` and ``dsh permissions rm``
do), and ``dsh`` itself reads files an attacker put there: torn JSON, 200 MB, a symbolic
link, a FIFO, a file others may change. Each is one ``PRIVATE_FILE_ERROR`` line, the file is
left as it was, and the reading process does not grow.
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
from harness.dsh_under_test import DSH, REAL_DSH

CEILING = 120  # seconds; a process that hangs fails the test instead of blocking the suite
WRITERS = 4
GRANTS = 75  # per writer: 300 grants in all, as the report that lost 67 of them

GRANTER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from dsh_cli.permissions.approvals import Approvals
    from dsh_cli.permissions.vocabulary import PermissionRequest

    path, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    approvals = Approvals(path)
    for n in range(count):
        request = PermissionRequest(tool=f"mcp__{who}__tool{n}", arguments={})
        approvals.approve(request, f"{who}-{n}")
        print(f"mcp__{who}__tool{n}", flush=True)
""")

TOKEN_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from dsh_cli.mcp_client.auth.tokens import TokenFile

    path, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    tokens = TokenFile(path)
    for n in range(count):
        # one resource shared by all (different keys) and one of this writer's own
        tokens.update("https://shared.example/mcp", {f"{who}-{n}": n})
        tokens.update(f"https://{who}.example/mcp", {"n": n})
""")


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=CEILING)
    assert process.returncode == 0, err
    return out


def _saved(path: Path) -> dict:
    return json.loads(path.read_text())


def test_four_processes_granting_always_at_once_lose_no_grant(dsh_home):
    path = dsh_home / "permissions.json"
    writers = [_start(GRANTER, str(path), f"w{i}", str(GRANTS)) for i in range(WRITERS)]
    for writer in writers:
        _finish(writer)
    saved = _saved(path)["always"]
    wanted = {f"mcp__w{i}__tool{n}" for i in range(WRITERS) for n in range(GRANTS)}
    assert wanted - set(saved) == set()  # on main: dozens lost
    assert len(saved) == WRITERS * GRANTS
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in dsh_home.iterdir() if p.name.endswith(".tmp")] == []


def test_dsh_permissions_rm_racing_a_writer_neither_resurrects_nor_loses(dsh_home):
    from dsh_cli.permissions.approvals import FILE_NAME, grant_id

    path = dsh_home / "permissions.json"
    _finish(_start(GRANTER, str(path), "old", "20"))
    old = set(_saved(path)["always"])
    writer = _start(GRANTER, str(path), "new", "300")
    assert writer.stdout is not None
    writer.stdout.readline()  # the writer is under way
    removed: set[str] = set()
    for _ in range(3):  # each rm reads, then writes, while the writer keeps writing
        done = subprocess.run([DSH, "permissions", "rm", "--all", "--json"],
                              capture_output=True, text=True, timeout=CEILING)
        assert done.returncode == 0, done.stderr
        removed |= set(json.loads(done.stdout)["removed"])
    written = set(_finish(writer).split()) | {"mcp__new__tool0"}
    final = set(_saved(path)["always"])
    assert final & old == set()  # on main: a stale copy brought removed grants back
    gone = {name for name in written if grant_id(FILE_NAME, name) in removed}
    assert final == written - gone  # nothing the writer saved was lost but what rm removed
    assert len(written) == 300


def test_four_processes_updating_the_token_file_at_once_lose_no_update(dsh_home):
    path = dsh_home / "mcp-tokens.json"
    count = 40
    writers = [_start(TOKEN_WRITER, str(path), f"w{i}", str(count)) for i in range(WRITERS)]
    for writer in writers:
        _finish(writer)
    saved = _saved(path)
    shared = saved["https://shared.example/mcp"]
    assert shared == {f"w{i}-{n}": n for i in range(WRITERS) for n in range(count)}
    for i in range(WRITERS):
        assert saved[f"https://w{i}.example/mcp"] == {"n": count - 1}
    assert path.stat().st_mode & 0o777 == 0o600


# --- hostile files ------------------------------------------------------------------------

def _hostile(kind: str, path: Path, outside: Path) -> None:
    """Put a ``kind`` of hostile file at ``path`` (``outside``: a file it may point to)."""
    if kind == "torn":
        path.write_text('{"always": {"mcp__x__y": {"digest": "')
        path.chmod(0o600)
    elif kind == "not-an-object":
        path.write_text("[1, 2, 3]\n")
        path.chmod(0o600)
    elif kind == "symlink":
        outside.write_text(json.dumps({"always": {}, "https://x/mcp": {}}))
        outside.chmod(0o600)
        path.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "others-may-write":
        path.write_text(json.dumps({"always": {}}))
        path.chmod(0o666)
    elif kind == "others-may-read":
        path.write_text(json.dumps({"always": {}}))
        path.chmod(0o644)
    elif kind == "another-users":
        path.write_text(json.dumps({"always": {}}))
        path.chmod(0o600)
        os.chown(path, 65534, 65534)
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as file:
            file.truncate(300 * 1024 * 1024)
        path.chmod(0o600)
    else:
        raise AssertionError(kind)


def _head(path: Path) -> bytes:
    with open(path, "rb") as file:
        return file.read(4096)  # not the whole 300 MB of "huge"


def _state(path: Path) -> tuple:
    found = path.lstat()
    content = os.readlink(path) if path.is_symlink() else (
        _head(path) if path.is_file() else b"")
    return found.st_mode, found.st_uid, found.st_size, content


KINDS = ["torn", "not-an-object", "symlink", "fifo", "others-may-write", "others-may-read",
         "another-users", "huge", "directory"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_approvals_file_is_one_line_and_left_as_it_is(kind, dsh_home, tmp_path):
    if kind == "another-users" and os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    path, outside = dsh_home / "permissions.json", tmp_path / "elsewhere.json"
    _hostile(kind, path, outside)
    before = _state(path)
    for command in (["permissions", "list"], ["permissions", "rm", "--all"]):
        done = subprocess.run([DSH, *command], capture_output=True, text=True,
                              timeout=20, stdin=subprocess.DEVNULL)  # a FIFO must not hang it
        assert done.returncode == 1 and done.stdout == "", done.stderr
        assert done.stderr.startswith(f"dsh: PRIVATE_FILE_ERROR: {path} "), done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr  # no traceback
    assert _state(path) == before  # never taken as empty, never written over
    if kind == "symlink":
        assert json.loads(outside.read_text()) == {"always": {}, "https://x/mcp": {}}


def _servers(tmp_path: Path) -> str:
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"prot": {"url": "http://127.0.0.1:9/mcp"}}}))
    return str(servers)


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_token_file_is_one_line_and_left_as_it_is(kind, dsh_home, tmp_path):
    if kind == "another-users" and os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    path, outside = dsh_home / "mcp-tokens.json", tmp_path / "elsewhere.json"
    _hostile(kind, path, outside)
    before = _state(path)
    done = subprocess.run([DSH, "mcp", "logout", "prot", "--mcp-config", _servers(tmp_path)],
                          capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and done.stdout == "", done.stderr
    assert f"PRIVATE_FILE_ERROR: {path} " in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert _state(path) == before
    if kind == "symlink":
        assert json.loads(outside.read_text()) == {"always": {}, "https://x/mcp": {}}


PEAK = textwrap.dedent("""
    import resource, subprocess, sys
    done = subprocess.run(sys.argv[1:], capture_output=True, timeout=60)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # KiB, on Linux
""")


def _peak_kib(*command: str) -> int:
    """The peak resident size of ``command``, run as the only child of a fresh process."""
    done = subprocess.run([sys.executable, "-c", PEAK, *command], capture_output=True,
                          text=True, timeout=CEILING)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
@pytest.mark.parametrize("file", ["permissions.json", "mcp-tokens.json"])
def test_a_200_mb_file_is_refused_without_growing_the_reader(file, dsh_home, tmp_path):
    path = dsh_home / file
    # valid JSON, so a reader that reads it all would parse it all
    with open(path, "w") as out:
        out.write('{"always": {}, "https://x/mcp": {"pad": "')
        chunk = "A" * (1024 * 1024)
        for _ in range(200):
            out.write(chunk)
        out.write('"}}')
    path.chmod(0o600)
    command = ([REAL_DSH, "permissions", "list"] if file == "permissions.json"
               else [REAL_DSH, "mcp", "logout", "prot", "--mcp-config", _servers(tmp_path)])
    huge = _peak_kib(*command)
    path.write_text("{}")
    small = _peak_kib(*command)
    # on main the whole file is read (and decoded): hundreds of MB more
    assert huge - small < 20 * 1024, (huge, small)
    assert huge < 150 * 1024, huge


def test_a_fifo_lock_file_or_approvals_file_never_hangs_a_grant(dsh_home):
    path = dsh_home / "permissions.json"
    os.mkfifo(dsh_home / ".permissions.json.lock", 0o600)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", GRANTER, str(path), "w", "1"],
                          capture_output=True, text=True, timeout=20)
    assert time.monotonic() - started < 15
    assert done.returncode != 0 and "is not a regular file (a FIFO)" in done.stderr
    assert not path.exists()
