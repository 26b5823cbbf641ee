"""The pieces that bound a server's bytes, in-process: ``bounded.lines`` over a real pipe,
``ServerLog``'s cap and rotation on real files, and the ``max_mcp_message`` setting."""

from __future__ import annotations

import contextlib
import os

import anyio
import pytest
from anyio.streams.file import FileReadStream

from dsh_cli.core.errors import ConfigError
from dsh_cli.mcp_client.config.servers import DEFAULT_MAX_MESSAGE, parse_servers
from dsh_cli.mcp_client.transport.bounded import MessageTooLarge, lines
from dsh_cli.mcp_client.transport.server_log import ServerLog


def read_lines(data: bytes, limit: int) -> list[bytes | str]:
    """What ``lines`` yields for ``data`` written to a real pipe; ``"too large"`` at the end
    when it refused a line."""

    async def main() -> list[bytes | str]:
        read_end, write_end = os.pipe()
        found: list[bytes | str] = []
        async with (FileReadStream(os.fdopen(read_end, "rb", buffering=0)) as stream,
                    anyio.create_task_group() as tasks):
            tasks.start_soon(anyio.to_thread.run_sync, _write, write_end, data)
            try:
                async for line in lines(stream, limit):
                    found.append(line)
            except MessageTooLarge:
                found.append("too large")
        return found

    return anyio.run(main)


def _write(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as pipe, contextlib.suppress(BrokenPipeError):
        for start in range(0, len(data), 7):  # lines cut across reads
            pipe.write(data[start:start + 7])
            pipe.flush()


def test_lines_are_whole_across_reads_and_a_line_of_exactly_the_limit_passes():
    assert read_lines(b'{"a": 1}\n\n' + b"x" * 20 + b"\nend", 20) == [
        b'{"a": 1}', b"", b"x" * 20]  # the unfinished "end" is not a message


def test_a_line_over_the_limit_stops_the_reading_there():
    assert read_lines(b"ok\n" + b"x" * 21 + b"\nnever\n", 20) == [b"ok", "too large"]
    # refused before its newline arrives: the line is never held whole
    assert read_lines(b"x" * 1000, 20) == ["too large"]


def test_server_log_rotates_once_and_keeps_the_newest(tmp_path):
    path = tmp_path / "mcp.log"
    with ServerLog(path, limit=100) as log:
        for number in range(30):
            log.write(f"line {number:02}\n")  # 8 bytes each
    assert path.stat().st_size <= 100
    assert (tmp_path / "mcp.log.1").stat().st_size <= 100
    assert sorted(item.name for item in tmp_path.iterdir()) == ["mcp.log", "mcp.log.1"]
    assert path.read_text().endswith("line 29\n")


def test_a_log_already_over_the_cap_is_rotated_at_the_first_write(tmp_path):
    path = tmp_path / "mcp.log"
    path.write_bytes(b"old\n" * 100)
    with ServerLog(path, limit=100) as log:
        log.write("new\n")
    assert path.read_text() == "new\n"
    assert (tmp_path / "mcp.log.1").read_bytes() == b"old\n" * 100


def test_max_mcp_message_is_a_positive_number_of_bytes():
    def server(**extra: object):
        [config] = parse_servers({"mcpServers": {"s": {"command": "x", **extra}}}, "f", {})
        return config

    assert server().max_mcp_message == DEFAULT_MAX_MESSAGE == 16 * 1024 * 1024
    assert server(max_mcp_message=1024).max_mcp_message == 1024
    for bad in (0, -1, 1.5, "16MiB", True):
        with pytest.raises(ConfigError, match="max_mcp_message must be a positive number"):
            server(max_mcp_message=bad)
