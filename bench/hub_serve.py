"""The serving hub (issue 47): a question's way to a desk through two ``dsh hub serve``
processes, and a hub's memory with 10,000 pending.

**Ask → shown at a desk on the other hub process.** Two real ``dsh hub serve`` processes on
one PostgreSQL (a throwaway cluster, ``tests/harness/postgres.py``); an agent (the official
MCP SDK over Streamable HTTP, with its agent token) calls ``ask_user_question`` on the first,
a real ``dsh attach --hub URL --jsonl`` desk (a human's token) is connected to the second and
answers each batch the moment it reads it. Timed: from ``tools/call`` until the desk reads
the ``question/requested`` line. The peer is the same through one local ``dsh mcp`` (stdio)
and ``dsh attach --jsonl``. p50 and p99 of each run, runs alternating; **budget: p99 ≤ 5 ×
the local path's**.

**Memory with 10,000 pending.** One ``dsh hub serve``, a desk stream open on its ``/desk``
(a raw ``GET``, read in this process), ten agents each with its own token and MCP session
making 1,000 async asks (``delivery: "async"``: the call returns a ticket at once, the
hub keeps the entry and waits for its answer, as it does for every pending ask); the
hub's resident memory (``VmRSS``) once the asks are made and the desk was told what it
shows (at most ``HUB_DESK_ENTRIES``), against the same process idle (its agents' sessions
and the desk open, nothing asked). **Budget: + 200 MB.** On PostgreSQL when its programs are
here, else on SQLite (the row says which).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

from bench.context import Context
from bench.history import _answer_all
from bench.hub import postgres_cluster
from bench.proc import dsh_argv
from bench.table import Row, at_most

FACTOR = 5.0  # hub p99 ≤ FACTOR × the local path's
GROWTH_MB = 200.0  # hub memory with PENDING pending ≤ idle + GROWTH_MB
PENDING, AGENTS = 10_000, 10  # async asks, from this many agents (1,000 each: a session's cap)
# history's desk answers "No" to every question it is shown
BATCH = {"questions": [{"id": "deploy", "header": "Deploy", "question": "Deploy to staging?",
                        "options": [{"label": "Yes"}, {"label": "No"}]}]}


def _tokens(location: str, agents: int) -> tuple[list[str], str]:
    """``agents`` agent tokens and one human's, made in the store; their secrets."""
    from dsh_cli.hub.store import HubStore

    with HubStore.open(location, replica="bench") as store:
        secrets = [store.add_token(f"agent-{n:02d}", "agent").secret for n in range(agents)]
        return secrets, store.add_token("alice", "human").secret


@contextlib.asynccontextmanager
async def _hub(location: str, env: dict[str, str]) -> AsyncIterator[tuple[int, str]]:
    """A real ``dsh hub serve`` on ``location``: its pid and URL; stopped (SIGTERM) after."""
    process = await asyncio.create_subprocess_exec(
        *dsh_argv("hub", "serve", "--store", location, "--port", "0"), env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    drained = None
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), 120)).decode()
        if not line.startswith("dsh: hub http"):
            raise RuntimeError(f"dsh hub serve said {line.strip()!r}")
        drained = asyncio.ensure_future(process.stderr.read())  # it never blocks on a pipe
        yield process.pid, line.split()[-1]
    finally:
        if process.returncode is None:
            process.terminate()
        await asyncio.wait_for(process.wait(), 60)
        if drained is not None:
            drained.cancel()


@contextlib.asynccontextmanager
async def _agent(url: str, secret: str, name: str) -> AsyncIterator[Any]:
    """An MCP client of the hub's /mcp (the official SDK) with an agent's token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import Implementation

    headers = {"Authorization": f"Bearer {secret}", "X-Dsh-Agent": quote(name),
               "X-Dsh-Machine": "bench", "X-Dsh-Cwd": quote("/srv/app")}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
            Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy",
                   client_info=Implementation(name=name, version="1")) as client:
        yield client


def _resident_mb(pid: int) -> float:
    """The process's resident memory now (``VmRSS``), in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


# -- memory with 10,000 pending ----------------------------------------------------------

async def _desk_stream(url: str, secret: str, heard: Callable[[str], None]) -> None:
    """A raw ``GET /desk``: ``heard`` each frame's type."""
    import httpx2

    async with httpx2.AsyncClient(timeout=None) as http, http.stream(
            "GET", f"{url}/desk", headers={"Authorization": f"Bearer {secret}"}) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.strip():
                heard(str(json.loads(line).get("type")))


async def _memory(ctx: Context, location: str, pending: int, agents: int
                  ) -> tuple[float, float, int]:
    """The hub's resident MB idle and with ``pending`` async asks; how many the desk shows."""
    from dsh_cli.core.limits import HUB_DESK_ENTRIES

    secrets, human = _tokens(location, agents)
    each = pending // agents
    async with _hub(location, ctx.env) as (pid, url), contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(_agent(url, secret, f"agent {n}"))
                   for n, secret in enumerate(secrets)]
        shown = Counter[str]()
        hello, told = asyncio.Event(), asyncio.Event()
        wanted = min(each * agents, HUB_DESK_ENTRIES)

        def heard(kind: str) -> None:
            shown[kind] += 1
            if kind == "desk/hello":
                hello.set()
            if shown["question/requested"] >= wanted:
                told.set()

        desk = asyncio.ensure_future(_desk_stream(url, human, heard))
        try:
            await asyncio.wait_for(hello.wait(), 60)  # the desk is in
            idle = _resident_mb(pid)

            async def asks(client: Any) -> None:
                for _ in range(each):
                    result = await client.call_tool("ask_user_question",
                                                    {**BATCH, "delivery": "async"})
                    if result.is_error or "ticket" not in str(result.content):
                        raise RuntimeError(f"ask_user_question: {result.content}")

            await asyncio.gather(*(asks(client) for client in clients))
            await asyncio.wait_for(told.wait(), 300)
            full = _resident_mb(pid)
        finally:
            desk.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await desk
    return idle, full, shown["question/requested"]


def _memory_rows(ctx: Context, cluster: Any) -> list[Row]:
    pending, agents = (20, 2) if ctx.smoke else (PENDING, AGENTS)
    location = cluster.create_schema() if cluster else str(ctx.work / "hub-memory.db")
    engine = "PostgreSQL" if cluster else "SQLite"
    idle, full, shown = asyncio.run(_memory(ctx, location, pending, agents))
    return [Row(f"hub memory, {pending:,} pending async asks from {agents} agents, a desk "
                f"shown {shown:,} ({engine})", "MB", [full], [idle], "idle",
                f"≤ idle + {GROWTH_MB:g} MB",
                lambda dsh, base: base is not None and dsh - base <= GROWTH_MB)]


# -- ask → shown at a desk ---------------------------------------------------------------

async def _desk(argv: list[str], env: dict[str, str]
                ) -> tuple[asyncio.subprocess.Process, asyncio.Queue[float], Any]:
    """A ``dsh attach --jsonl`` desk answering all it shows; when it read each."""
    desk = await asyncio.create_subprocess_exec(
        *argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL)
    seen: asyncio.Queue[float] = asyncio.Queue()
    return desk, seen, asyncio.ensure_future(_answer_all(desk, seen))


async def _end_desk(desk: asyncio.subprocess.Process, answering: Any) -> None:
    assert desk.stdin is not None
    desk.stdin.close()
    try:
        await asyncio.wait_for(desk.wait(), 30)
    finally:
        answering.cancel()


async def _timed_asks(call: Callable[[], Any], seen: asyncio.Queue[float], asks: int
                      ) -> list[float]:
    """Milliseconds from each call until the desk read its batch (after one warm-up)."""
    took = []
    for _ in range(asks + 1):
        started = time.perf_counter()
        result = await asyncio.wait_for(call(), 120)
        if result.is_error:
            raise RuntimeError(f"ask_user_question: {result.content}")
        took.append((await asyncio.wait_for(seen.get(), 60) - started) * 1000)
    return took[1:]


async def _through_hubs(ctx: Context, location: str, asks: int) -> list[float]:
    """Ask at one hub process, shown at a desk connected to the other."""
    (secret,), human = _tokens(location, 1)
    async with _hub(location, ctx.env) as (_, asked_at), _hub(location, ctx.env) as (_, shown_at):
        env = dict(ctx.env, DSH_HUB_TOKEN=human)
        desk, seen, answering = await _desk(dsh_argv("attach", "--hub", shown_at, "--jsonl"),
                                            env)
        try:
            async with _agent(asked_at, secret, "bench-agent") as client:
                return await _timed_asks(lambda: client.call_tool("ask_user_question", BATCH),
                                         seen, asks)
        finally:
            await _end_desk(desk, answering)


async def _through_local(ctx: Context, asks: int) -> list[float]:
    """The same through one local ``dsh mcp`` (stdio) and ``dsh attach --jsonl``."""
    from mcp import Client, StdioServerParameters

    home = tempfile.mkdtemp(prefix="dsh-hub-local-")  # short: the desk's Unix socket
    env = dict(ctx.env, DSH_HOME=home)
    desk, seen, answering = await _desk(dsh_argv("attach", "--jsonl"), env)
    argv = dsh_argv("mcp", "--wait", "60")
    try:
        async with Client(StdioServerParameters(command=argv[0], args=argv[1:], env=env),
                          mode="legacy") as client:
            return await _timed_asks(lambda: client.call_tool("ask_user_question", BATCH),
                                     seen, asks)
    finally:
        await _end_desk(desk, answering)
        shutil.rmtree(home, ignore_errors=True)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _latency_rows(ctx: Context, cluster: Any) -> list[Row]:
    if cluster is None:
        return [Row("hub: ask → shown at a desk on the other hub process: no PostgreSQL "
                    "(no initdb, pg_ctl; bash .ci/run installs them)", "ms", [])]
    asks = 3 if ctx.smoke else 100
    hub: dict[str, list[float]] = {"p50": [], "p99": []}
    local: dict[str, list[float]] = {"p50": [], "p99": []}
    for _ in range(ctx.runs(3)):
        for side, took in ((local, asyncio.run(_through_local(ctx, asks))),
                           (hub, asyncio.run(_through_hubs(ctx, cluster.create_schema(),
                                                           asks)))):
            side["p50"].append(statistics.median(took))
            side["p99"].append(_percentile(took, 0.99))
    label = f"{asks} asks a run"
    return [Row(f"hub: ask → shown at a desk on the other hub process, p50, {label}", "ms",
                hub["p50"], local["p50"], "dsh mcp + attach", paired=True),
            Row(f"hub: ask → shown at a desk on the other hub process, p99, {label}", "ms",
                hub["p99"], local["p99"], "dsh mcp + attach", f"≤ {FACTOR:g} × dsh mcp + attach",
                at_most(FACTOR), paired=True)]


def measure(ctx: Context) -> list[Row]:
    cluster = postgres_cluster()
    return [*_latency_rows(ctx, cluster), *_memory_rows(ctx, cluster)]
