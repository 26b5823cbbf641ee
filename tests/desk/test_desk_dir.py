"""The desk directory: derived from the uid, the same whatever an agent strips, never another's."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import uuid
from pathlib import Path

import pytest
from harness.dsh_under_test import DSH
from harness.mcp_util import CEILING, JsonlDeskProcess, bounded

from dsh_cli.core.errors import DESK_DIR_REFUSED
from dsh_cli.desk.channel import DeskDirRefused, desk_dir, runtime_dir

OTHER_UID = 65534  # nobody


def test_the_user_runtime_directory_when_it_is_the_users(tmp_path, monkeypatch):
    monkeypatch.delenv("DSH_HOME")
    uid = os.getuid()
    (tmp_path / "run" / str(uid)).mkdir(parents=True)
    found = runtime_dir(uid=uid, run_user=tmp_path / "run", tmp=tmp_path / "tmp")
    assert found == tmp_path / "run" / str(uid) / "dsh"


def test_tmp_when_there_is_no_user_runtime_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("DSH_HOME")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))  # not what decides
    found = runtime_dir(uid=4321, run_user=tmp_path / "run", tmp=tmp_path / "tmp")
    assert found == tmp_path / "tmp" / "dsh-4321"


def test_tmp_when_the_user_runtime_directory_is_someone_elses(tmp_path, monkeypatch):
    monkeypatch.delenv("DSH_HOME")
    other = os.getuid() + 1000  # the directory below is ours, so not that uid's
    (tmp_path / "run" / str(other)).mkdir(parents=True)
    found = runtime_dir(uid=other, run_user=tmp_path / "run", tmp=tmp_path / "tmp")
    assert found == tmp_path / "tmp" / f"dsh-{other}"


def test_dsh_home_isolates(dsh_home, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent")
    assert runtime_dir() == dsh_home / "run"


def test_the_directory_is_created_0700(tmp_path):
    made = desk_dir(tmp_path / "dsh-1")
    assert stat.S_IMODE(made.lstat().st_mode) == 0o700


def test_a_loose_directory_of_ours_is_tightened(tmp_path):
    (tmp_path / "dsh-1").mkdir(mode=0o755)
    (tmp_path / "dsh-1").chmod(0o755)
    assert stat.S_IMODE(desk_dir(tmp_path / "dsh-1").lstat().st_mode) == 0o700


def test_a_symlink_is_refused_even_to_a_directory_of_ours(tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "dsh-1").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DeskDirRefused, match="symlink") as refused:
        desk_dir(tmp_path / "dsh-1")
    assert refused.value.code == DESK_DIR_REFUSED
    assert refused.value.path == tmp_path / "dsh-1"


def test_a_file_is_refused(tmp_path):
    (tmp_path / "dsh-1").write_text("planted")
    with pytest.raises(DeskDirRefused, match="not a directory"):
        desk_dir(tmp_path / "dsh-1")
    assert (tmp_path / "dsh-1").read_text() == "planted"


def test_a_directory_of_another_uid_is_refused(tmp_path):
    planted = tmp_path / "dsh-1"
    planted.mkdir()
    planted.chmod(0o777)
    if os.geteuid() == 0:
        os.chown(planted, OTHER_UID, OTHER_UID)  # really another user's
        uid = os.getuid()
    else:
        uid = os.getuid() + 1000  # ours, so another uid's as far as that uid is concerned
    with pytest.raises(DeskDirRefused, match="owned by uid") as refused:
        desk_dir(planted, uid=uid)
    assert "DSH_HOME" in refused.value.message
    assert stat.S_IMODE(planted.lstat().st_mode) == 0o777  # not touched


def _shared_dir() -> Path:
    """The spec's place, written out here rather than asked of the code under test."""
    uid = os.getuid()
    user_run = Path("/run/user") / str(uid)
    if user_run.is_dir() and not user_run.is_symlink() and user_run.stat().st_uid == uid:
        return user_run / "dsh"
    return Path("/tmp") / f"dsh-{uid}"


async def _our_batch(desk: JsonlDeskProcess, question: str) -> dict:
    """The ``question/requested`` of this test's batch (the directory may be shared)."""
    while True:
        requested = await desk.event("question/requested")
        if requested["questions"][0]["question"] == question:
            return requested


def test_a_server_with_a_stripped_environment_meets_a_desk_of_a_login_shell(tmp_path):
    """Codex passes its servers PATH and HOME, not XDG_RUNTIME_DIR; the desk has both."""
    from mcp import Client, StdioServerParameters
    from mcp.types import Implementation

    question = f"Which database? ({uuid.uuid4()})"  # the shared directory may hold others'
    batch = {"questions": [{"id": "db", "question": question,
                            "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}
    # PYTHONPATH only so the child runs this checkout: it says nothing of where to listen
    stripped = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "agent-home"),
                "PYTHONPATH": os.environ["PYTHONPATH"]}
    login = {name: value for name, value in os.environ.items() if name != "DSH_HOME"}
    login.update(HOME=str(tmp_path / "login-home"), XDG_RUNTIME_DIR=str(tmp_path / "xdg"))
    (tmp_path / "xdg").mkdir(mode=0o700)

    async def main():
        desk = JsonlDeskProcess(await asyncio.create_subprocess_exec(
            DSH, "attach", "--jsonl", env=login, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        try:
            params = StdioServerParameters(command=DSH, args=["mcp", "--wait", "10"],
                                           env=stripped)
            async with Client(params, client_info=Implementation(name="codex-like",
                                                                 version="1")) as mcp:
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question", batch))
                ours = asyncio.ensure_future(_our_batch(desk, question))
                await asyncio.wait({call, ours}, timeout=CEILING,
                                   return_when=asyncio.FIRST_COMPLETED)
                if ours.done():  # the desk saw it: answer, as the human would
                    await desk.answer(ours.result(), [{"id": "db", "selected": ["SQLite"]}])
                else:  # the server gave up first: the two never met
                    ours.cancel()
                result = await asyncio.wait_for(call, CEILING)
            assert desk.process.stderr is not None
            try:
                said = await asyncio.wait_for(desk.process.stderr.readline(), 5)
            except TimeoutError:
                said = b""  # the desk said nothing: the assertion below names it
            return said.decode(), result
        finally:
            await desk.close()

    said, result = bounded(main())
    assert result.is_error is False, result.content  # old: NO_PROVIDER, the desk unseen
    assert result.structured_content["answers"][0]["selected"] == ["SQLite"]
    assert said == f"dsh: desk listening in {_shared_dir()} for every dsh mcp of uid " \
                   f"{os.getuid()}\n"


def test_attach_refuses_a_planted_directory_in_one_line(tmp_path, dsh_home):
    (dsh_home / "run").symlink_to(tmp_path)
    done = subprocess.run([DSH, "attach", "--jsonl"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=CEILING)
    assert done.returncode == 2
    assert done.stderr == (f"dsh: DESK_DIR_REFUSED: {dsh_home / 'run'} is a symlink, not a "
                           "directory; remove it\n")


def test_dsh_mcp_with_a_planted_directory_says_so_once_and_serves_on(tmp_path, dsh_home):
    (dsh_home / "run").symlink_to(tmp_path)
    server = subprocess.Popen([DSH, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "ask_user_question", "arguments": {"questions": [
             {"id": "db", "question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}]}}},
    ):
        server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    replies = [json.loads(server.stdout.readline()) for _ in range(2)]
    server.stdin.close()
    stderr = server.stderr.read().decode() if server.stderr else ""
    server.wait(CEILING)
    assert replies[1]["result"]["structuredContent"]["error"]["code"] == "NO_PROVIDER"
    assert stderr.splitlines()[0] == (
        f"dsh: DESK_DIR_REFUSED: {dsh_home / 'run'} is a symlink, not a directory; remove it "
        "(no desk can reach this server)")
    assert not any(tmp_path.glob("mcp-*.sock"))  # nothing was made where the link points


def test_attach_help_says_the_desk_directory_is_per_uid_and_dsh_home_keeps_desks_apart():
    shown = subprocess.run([DSH, "attach", "--help"], capture_output=True, text=True,
                           timeout=30, env={**os.environ, "COLUMNS": "200"})
    assert shown.returncode == 0
    said = " ".join(shown.stdout.split())
    assert "a directory per user id, whatever HOME is" in said
    assert "To keep desks apart, give each (and its agents' `dsh mcp`) its own DSH_HOME" in said
