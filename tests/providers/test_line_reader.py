"""``LineReader`` reads its own duplicate of a descriptor, so a reused number is never read."""

from __future__ import annotations

import asyncio
import os
import select

from dsh_cli.providers.line_reader import LineReader


def test_a_descriptor_number_closed_and_reused_for_another_pipe_is_never_read():
    first_read, first_write = os.pipe()
    other_read, other_write = os.pipe()

    async def go():
        reader = LineReader(first_read)
        os.write(first_write, b"one\n")
        assert await reader.readline() == "one"
        # the owner closes its descriptor and the process reuses the number for another pipe
        os.dup2(other_read, first_read)
        os.write(first_write, b"two\n")
        os.write(other_write, b"not the reader's\n")
        assert await asyncio.wait_for(reader.readline(), 5) == "two"
        os.close(first_write)
        assert await asyncio.wait_for(reader.readline(), 5) is None
        reader.close()

    try:
        asyncio.run(go())
        ready, _, _ = select.select([first_read], [], [], 5)
        assert ready and os.read(first_read, 100) == b"not the reader's\n"
    finally:
        for fd in (first_read, other_read, other_write):
            os.close(fd)


def test_a_descriptor_closed_before_the_reader_starts_reads_as_the_end():
    read_end, write_end = os.pipe()
    os.close(read_end)

    async def go():
        return await asyncio.wait_for(LineReader(read_end).readline(), 5)

    try:
        assert asyncio.run(go()) is None
    finally:
        os.close(write_end)
