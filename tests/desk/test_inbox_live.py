"""The inbox with several real ``dsh mcp`` processes and several desks (pipes, no pty).

Three agents ask at once; a plain desk lists all three live, a ``--jsonl`` desk sees the
same list as ``inbox/changed`` events. An entry the plain desk opens is taken in the other
desks' lists (also in a desk that attaches later, from its replay); the plain desk killed
mid-answer gives it back, free, and it is answered at the other desk.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess

from harness.dsh_under_test import DSH
from harness.mcp_util import CEILING, bounded, client, jsonl_desk


def _batch(text: str) -> dict:
    return {"questions": [{"id": "q", "header": "Pick", "question": text,
                           "options": [{"label": "yes"}, {"label": "no"}]}]}


async def _read_until(stream, pattern: str) -> str:
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()  # a character may span two reads
    seen = ""
    while not re.search(pattern, seen):
        chunk = await asyncio.wait_for(stream.read(4096), CEILING)
        assert chunk, f"the desk ended before {pattern!r}; it wrote {seen!r}"
        seen += decoder.decode(chunk)
    return seen


async def _change(desk, change: str, rpc_id: str | None = None) -> dict:
    while True:
        event = await desk.event("inbox/changed")
        if event["change"] == change and rpc_id in (None, event["entry"]["rpc_id"]):
            return event


def test_three_servers_two_desks_taken_released_by_a_killed_desk(tmp_path):
    for name in "abc":
        (tmp_path / name).mkdir()

    async def main():
        plain = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            async with jsonl_desk() as program, \
                    client("--wait", "20", name="agent-a", cwd=str(tmp_path / "a")) as a, \
                    client("--wait", "20", name="agent-b", cwd=str(tmp_path / "b")) as b, \
                    client("--wait", "20", name="agent-c", cwd=str(tmp_path / "c")) as c:
                calls = {name: asyncio.ensure_future(agent.call_tool(
                    "ask_user_question", _batch(f"Deploy {name}?")))
                    for name, agent in (("a", a), ("b", b), ("c", c))}
                listed = await _read_until(plain.stdout, r"(\+ \d+\. .*\n.*){3}")
                added = {}
                while len(added) < 3:
                    event = await _change(program, "added")
                    added[event["entry"]["agent"]] = event
                # the program answers a's batch: it leaves the plain desk's list
                entry_a = added["agent-a"]["entry"]
                await program.answer({"rpc_id": entry_a["rpc_id"],
                                      "session_id": entry_a["session_id"]},
                                     [{"id": "q", "selected": ["yes"]}])
                number_a = re.search(r"\+ (\d+)\. \[question\] \d+s · agent-a", listed).group(1)
                left = await _read_until(plain.stdout, rf"- {number_a}\. answered at another desk")
                # the plain desk opens b's entry: taken at the program's desk
                number_b = re.search(r"\+ (\d+)\. \[question\] \d+s · agent-b", listed).group(1)
                plain.stdin.write(f"{number_b}\n".encode())
                await _read_until(plain.stdout, r"Deploy b\?")
                rpc_b = added["agent-b"]["entry"]["rpc_id"]
                taken = await _change(program, "taken", rpc_b)
                # a desk that attaches now learns it from its replay
                async with jsonl_desk() as late:
                    late_taken = await _change(late, "taken", rpc_b)
                    await late.send({"type": "inbox/list"})
                    listing = await late.event("inbox/list")
                plain.send_signal(signal.SIGKILL)  # killed mid-answer
                await plain.wait()
                free = await _change(program, "free", rpc_b)
                entry_b = added["agent-b"]["entry"]
                await program.answer({"rpc_id": rpc_b, "session_id": entry_b["session_id"]},
                                     [{"id": "q", "selected": ["no"]}])
                result_b = await asyncio.wait_for(calls["b"], CEILING)
                result_a = await asyncio.wait_for(calls["a"], CEILING)
                # the agent's result and the desk's "removed" travel on two sockets: wait for it
                await _change(program, "removed", rpc_b)
                await program.send({"type": "inbox/list"})
                still = await program.event("inbox/list")
                calls["c"].cancel()
                return (listed, left, taken, late_taken, listing, free, result_a, result_b,
                        still)
        finally:
            if plain.returncode is None:
                plain.kill()
                await plain.wait()

    listed, left, taken, late_taken, listing, free, result_a, result_b, still = \
        bounded(main(), 120)
    for name in "abc":
        assert re.search(rf"\[question\] \d+s · agent-{name} · .*/{name} · pid \d+ · "
                         rf"Pick: Deploy {name}\?", listed), listed
    assert "answered at another desk" in left  # the program's answer left the plain list
    assert taken["pending"] == 2 and taken["entry"]["taken"] is True
    assert late_taken["entry"]["agent"] == "agent-b"
    assert [entry["taken"] for entry in listing["entries"]
            if entry["agent"] == "agent-b"] == [True]
    assert free["entry"]["taken"] is False
    assert result_a.structured_content["answers"][0]["selected"] == ["yes"]
    assert result_b.structured_content["answers"][0]["selected"] == ["no"]
    assert [entry["agent"] for entry in still["entries"]] == ["agent-c"]


def test_the_same_question_again_offers_its_last_answer_and_never_submits_it():
    from harness.mcp_util import BATCH

    async def main():
        plain = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            async with jsonl_desk() as program, client("--wait", "20") as mcp:
                first = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                # the program desk links as the plain one does: it has the first before the
                # plain desk answers it, or it would never see it
                await program.event("question/requested")
                await _read_until(plain.stdout, r"\+ 1\. ")
                plain.stdin.write(b"1\n")
                await _read_until(plain.stdout, r"answer \(")
                plain.stdin.write(b"2\n")  # SQLite
                await asyncio.wait_for(first, CEILING)
                again = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
                requested = await program.event("question/requested")
                await _read_until(plain.stdout, r"\+ 2\. ")
                plain.stdin.write(b"2\n")
                shown = await _read_until(plain.stdout, r"answer \(")
                await asyncio.sleep(0.5)
                waited = not again.done()  # offered, not submitted
                plain.stdin.write(b"1\n")
                result = await asyncio.wait_for(again, CEILING)
                return requested, shown, waited, result
        finally:
            if plain.returncode is None:
                plain.kill()
                await plain.wait()

    requested, shown, waited, result = bounded(main(), 90)
    assert requested["last_answers"] == {"db": ["SQLite"]}
    assert requested["last_answered"]["db"]["session_id"] == requested["session_id"]
    assert "2. SQLite (last answer, " in shown
    assert waited
    assert result.structured_content["answers"][0]["selected"] == ["PostgreSQL (Recommended)"]


def test_a_waiting_question_is_listed_before_another_agents_300_async_batches(tmp_path):
    """Agent A fills the inbox with 300 async batches, then agent B blocks on a question:
    B's entry (number 301) is the first row of the list, not one screen of 15 below it."""
    async def main():
        plain = await asyncio.create_subprocess_exec(
            DSH, "attach", "--plain", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            await _read_until(plain.stdout, "nothing pending")
            async with client("--wait", "20", name="agent-a") as a, \
                    client("--wait", "20", name="agent-b") as b:
                for number in range(300):
                    result = await a.call_tool("ask_user_question", {
                        **_batch(f"Rename file {number}?"), "delivery": "async"})
                    assert result.structured_content["accepted"] is True
                blocked = asyncio.ensure_future(b.call_tool("ask_user_question",
                                                            _batch("Drop the table?")))
                await _read_until(plain.stdout, r"\+ 301\. .*agent-b")
                plain.stdin.write(b"l\n")
                listed = await _read_until(plain.stdout, r"inbox: 301 pending\n(.*\n){301}")
                blocked.cancel()
                return listed
        finally:
            if plain.returncode is None:
                plain.kill()
                await plain.wait()

    listed = bounded(main(), 150)
    rows = listed[listed.index("inbox: 301 pending"):].splitlines()[1:302]
    assert "301. [question]" in rows[0] and "agent-b" in rows[0] and "async" not in rows[0]
    assert all("agent-a" in row and "· async" in row for row in rows[1:])
    assert [int(row.split(".")[0]) for row in rows[1:]] == list(range(1, 301))
