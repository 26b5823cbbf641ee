"""The desk channel: socket modes, stale sockets, garbage, peers of another uid."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

import pytest
from harness.mcp_util import BATCH, bounded, client, jsonl_desk

from dsh_cli.desk.channel import PeerRefused, check_peer, server_sockets
from dsh_cli.desk.link import DeskLinks


async def _socket_of(ceiling: float = 20.0) -> Path:
    for _ in range(int(ceiling / 0.05)):
        found = server_sockets()
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError("dsh mcp made no socket")


def test_socket_is_0600_in_a_0700_directory(runtime_dir):
    async def main():
        async with client():
            path = await _socket_of()
            return stat.S_IMODE(path.stat().st_mode), stat.S_IMODE(path.parent.stat().st_mode)

    assert bounded(main()) == (0o600, 0o700)
    assert server_sockets() == []  # removed when the server ends


def test_a_stale_socket_is_removed_by_the_desk(runtime_dir):
    directory = Path(runtime_dir)
    directory.mkdir(mode=0o700, parents=True)
    stale = directory / "mcp-999999.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(stale))
    dead.close()  # the file stays, nobody listens: a killed server's leftover
    assert stale.is_socket()

    async def main():
        links = DeskLinks(lambda link, event: None, lambda link: None)
        await links.scan()
        return links.links

    assert bounded(main()) == {}
    assert not stale.exists()


def test_a_stale_socket_does_not_stop_the_desk_from_answering(runtime_dir):
    directory = Path(runtime_dir)
    directory.mkdir(mode=0o700, parents=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(directory / "mcp-999998.sock"))
    dead.close()

    async def main():
        async with jsonl_desk() as desk, client("--wait", "20") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            requested = await desk.event("question/requested")
            await desk.answer(requested, [{"id": "db", "selected": ["SQLite"]}])
            return await call

    assert bounded(main()).is_error is False
    assert not (directory / "mcp-999998.sock").exists()


def test_garbage_on_the_socket_gets_bad_frame_and_the_server_carries_on():
    async def main():
        async with client("--wait", "20") as mcp:
            path = await _socket_of()
            reader, writer = await asyncio.open_unix_connection(str(path))
            hello = json.loads(await reader.readline())
            writer.write(b"\x00\xffgarbage{{\n" + b"[1,2]\n" + b'{"type":"nope"}\n')
            await writer.drain()
            errors = [json.loads(await reader.readline()) for _ in range(3)]
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            requested = json.loads(await reader.readline())
            answer = {"type": "question/answer", "rpc_id": requested["rpc_id"],
                      "session_id": requested["session_id"],
                      "answers": [{"id": "db", "selected": ["SQLite"]}]}
            writer.write((json.dumps(answer) + "\n").encode())
            await writer.drain()
            result = await call
            writer.close()
            return hello, errors, result

    hello, errors, result = bounded(main())
    assert hello["type"] == "desk/hello" and isinstance(hello["pid"], int)
    assert [e["code"] for e in errors] == ["BAD_FRAME"] * 3
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_check_peer_refuses_another_uid():
    check_peer(1000, own_uid=1000)
    with pytest.raises(PeerRefused) as refused:
        check_peer(1001, own_uid=1000)
    assert refused.value.uid == 1001
    with pytest.raises(PeerRefused):
        check_peer(None, own_uid=1000)  # unknown credentials are refused too


def _connect_as(uid: int, path: Path) -> bytes:
    """What a process of ``uid`` reads from the socket (forked: no interpreter to exec)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become the other user, connect, report what came
        try:
            os.close(read_end)
            os.setgid(uid)
            os.setuid(uid)
            peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            peer.connect(str(path))
            peer.settimeout(20)
            os.write(write_end, b"connected:" + peer.recv(4096))
        except BaseException as error:
            os.write(write_end, f"failed:{error}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read()
    os.waitpid(pid, 0)
    return report


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a child as another uid")
def test_a_peer_of_another_uid_is_refused_even_with_loose_modes(monkeypatch):
    home = Path(tempfile.mkdtemp(prefix="dsh-loose-"))  # pytest's parents are 0700
    home.chmod(0o755)
    monkeypatch.setenv("DSH_HOME", str(home))
    try:
        _refused_with_loose_modes()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _refused_with_loose_modes():

    async def main():
        # no desk ever comes: the call waits out --wait, so it is short; a refused peer taken
        # for a desk would get the question at once instead
        async with client("--wait", "3") as mcp:
            path = await _socket_of()
            path.parent.chmod(0o755)  # a mistake of the user's: the uid check still holds
            path.chmod(0o666)
            done = await asyncio.to_thread(_connect_as, 65534, path)
            result = await mcp.call_tool("ask_user_question", BATCH)  # that was no desk
            return done, result

    done, result = bounded(main())
    assert done == b"connected:"  # connected, then closed at once: not even the hello
    assert result.structured_content["error"]["code"] == "NO_PROVIDER"
