"""A desk's hold on an entry is a lease: a desk that stalls with an entry open neither keeps
it taken at the others for ever nor silences their notifications (real ``dsh mcp``, real
desks, and a raw socket as the stalled desk)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from harness.dsh_under_test import DSH
from harness.mcp_util import CEILING, bounded, client, jsonl_desk, server_socket


def _batch(text: str) -> dict:
    return {"questions": [{"id": "q", "header": "Pick", "question": text,
                           "options": [{"label": "yes"}, {"label": "no"}]}]}


async def _stalled_desk():
    """A desk that connects, asks for the pending batches, and reads nothing more itself."""
    reader, writer = await asyncio.open_unix_connection(str(await server_socket()))
    writer.write(b'{"type":"questions/replay"}\n')
    return reader, writer


async def _requested(reader, text: str) -> str:
    """The rpc_id of the batch asking ``text``, as the raw socket reads it."""
    while True:
        line = await asyncio.wait_for(reader.readline(), CEILING)
        assert line, "the server hung up"
        event = json.loads(line)
        if event["type"] == "question/requested" and text in json.dumps(event["questions"]):
            return event["rpc_id"]


async def _read_until(stream, pattern: str) -> str:
    seen = ""
    while not re.search(pattern, seen):
        chunk = await asyncio.wait_for(stream.read(4096), CEILING)
        assert chunk, f"the desk ended before {pattern!r}; it wrote {seen!r}"
        seen += chunk.decode()
    return seen


def test_a_hold_never_renewed_lapses_and_a_renewed_one_stays(monkeypatch):
    """Two entries held: one by a plain desk that has it open (renewed), one by a stalled
    socket opened later (never renewed); the stalled hold lapses first and alone."""
    monkeypatch.setenv("DSH_DESK_HOLD_SECONDS", "1")

    async def main():
        plain = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            async with jsonl_desk() as program, client("--wait", "30") as mcp:
                calls = [asyncio.ensure_future(mcp.call_tool("ask_user_question", _batch(text)))
                         for text in ("Deploy a?", "Deploy b?")]
                listed = await _read_until(plain.stdout, r"(\+ \d+\. .*\n.*){2}")
                number_b = re.search(r"\+ (\d+)\. .*Deploy b\?", listed).group(1)
                plain.stdin.write(f"{number_b}\n".encode())  # held by the plain desk, open
                await _read_until(plain.stdout, r"Deploy b\?")
                changes = []
                while not changes or changes[-1]["change"] != "taken":
                    changes.append(await program.event("inbox/changed"))
                rpc_b = changes[-1]["entry"]["rpc_id"]
                reader, writer = await _stalled_desk()
                rpc_a = await _requested(reader, "Deploy a?")
                writer.write(json.dumps({"type": "desk/opened", "rpc_id": rpc_a}).encode()
                             + b"\n")
                opened = time.monotonic()
                while not (changes[-1]["change"] == "free"
                           and changes[-1]["entry"]["rpc_id"] == rpc_a):
                    changes.append(await program.event("inbox/changed"))
                lapsed = time.monotonic() - opened
                await program.send({"type": "inbox/list"})
                listing = await program.event("inbox/list")
                writer.close()
                for call in calls:
                    call.cancel()
                return rpc_a, rpc_b, changes, lapsed, listing
        finally:
            if plain.returncode is None:
                plain.kill()
                await plain.wait()

    rpc_a, rpc_b, changes, lapsed, listing = bounded(main(), 90)
    seen = [(change["change"], change["entry"]["rpc_id"]) for change in changes]
    assert ("taken", rpc_a) in seen and ("free", rpc_b) not in seen, seen
    assert lapsed >= 0.9
    taken = {entry["rpc_id"]: entry["taken"] for entry in listing["entries"]}
    assert taken == {rpc_a: False, rpc_b: True}


def test_another_desks_hold_never_silences_the_delayed_notification(tmp_path):
    """A stalled desk holds the only entry; the human's plain desk still runs its
    notify_command when ``notify_delay`` has passed."""
    log = tmp_path / "notified.jsonl"
    hook = tmp_path / "hook.py"
    hook.write_text(f"import sys\nopen({str(log)!r}, 'a').write(sys.stdin.read())\n")
    config = Path(os.environ["DSH_HOME"]) / "config.toml"
    config.write_text(f"notify_command = [{json.dumps(sys.executable)}, {json.dumps(str(hook))}]"
                      "\nnotify_delay = 3\n")

    async def main():
        plain = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            await _read_until(plain.stdout, "nothing pending")
            async with client("--wait", "30", name="agent-a") as mcp:
                reader, writer = await _stalled_desk()
                call = asyncio.ensure_future(mcp.call_tool("ask_user_question",
                                                           _batch("Deploy a?")))
                rpc_id = await _requested(reader, "Deploy a?")
                writer.write(json.dumps({"type": "desk/opened", "rpc_id": rpc_id}).encode()
                             + b"\n")
                await _read_until(plain.stdout, r"~ \d+\. taken at another desk")
                early = log.exists()  # the hold came before the delay ran out
                deadline = time.monotonic() + 30
                while not log.exists():
                    assert time.monotonic() < deadline, "no notification"
                    await asyncio.sleep(0.1)
                writer.close()
                call.cancel()
                return early
        finally:
            if plain.returncode is None:
                plain.kill()
                await plain.wait()

    assert bounded(main(), 90) is False
    assert json.loads(log.read_text().splitlines()[0])["agent"] == "agent-a"
