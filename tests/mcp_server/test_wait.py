"""``dsh mcp --wait SECONDS`` and a line desk naming a server's own page: who answers, when."""

from __future__ import annotations

import asyncio
import subprocess
import time

from harness.dsh_under_test import DSH
from harness.mcp_util import BATCH, CEILING, bounded, client, jsonl_desk


def test_a_desk_that_attaches_within_the_wait_answers():
    async def main():
        async with client("--wait", "30") as mcp:
            call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
            await asyncio.sleep(1.0)  # the batch is waiting, no desk yet
            assert not call.done()
            async with jsonl_desk() as desk:
                requested = await desk.event("question/requested")
                await desk.answer(requested, [{"id": "db", "selected": ["SQLite"]}])
                return await call

    result = bounded(main())
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_no_desk_within_the_wait_is_no_provider_after_it():
    async def main():
        async with client("--wait", "1.5") as mcp:
            started = time.monotonic()
            result = await mcp.call_tool("ask_user_question", BATCH)
            return result, time.monotonic() - started

    result, waited = bounded(main())
    assert result.structured_content["error"]["code"] == "NO_PROVIDER"
    assert waited >= 1.5  # it did wait (an upper bound is the bench's business)


def test_a_line_desk_prints_the_url_a_web_server_serves(tmp_path):
    async def main():
        server = await asyncio.create_subprocess_exec(
            DSH, "mcp", "--web", "--no-open", stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        desk = None
        try:
            announced = ""
            while "http://" not in announced:
                line = await asyncio.wait_for(server.stderr.readline(), CEILING)
                assert line, "dsh mcp --web ended without a URL"
                announced = line.decode()
            url = announced[announced.index("http://"):].split()[0]
            desk = await asyncio.create_subprocess_exec(
                DSH, "attach", "--plain", stdin=subprocess.PIPE,
                stdout=subprocess.PIPE)
            seen = ""
            while "asks in the browser" not in seen:
                chunk = await asyncio.wait_for(desk.stdout.read(4096), CEILING)
                assert chunk, f"the desk ended; it wrote {seen!r}"
                seen += chunk.decode()
            return url, seen
        finally:
            for process in (desk, server):
                if process is not None and process.returncode is None:
                    process.kill()
                    await process.wait()

    url, seen = bounded(main())
    assert url in seen
    assert "dsh mcp pid" in seen
