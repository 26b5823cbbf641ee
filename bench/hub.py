"""The hub's measures (issue 47): answers two hub processes settle on one PostgreSQL, and
the desk's side of 1,000 pending questions from 100 agents.

**Answers per second.** ``ENTRIES`` questions are asked into a fresh store first (by
``AGENTS`` agent tokens, straight through ``HubStore.ask``); then two OS processes, each
with its own ``HubStore`` on the same PostgreSQL (what two ``dsh hub`` processes share),
answer them at once: each its half, and both every tenth entry, at the same places in
their lists, so those race at the conditional update. Timed from the "go" both read to
the last answer; the rate is entries settled per second. The peer is the same work in one
process on SQLite (the default store: its half, the other half, the raced tenth twice).
Every run checks the outcome: every entry
settled, none by both (the processes' own tallies, and the store's audit: one ``answer``
row an entry): the **double wins row, budget 0**. The PostgreSQL server is a throwaway
cluster (``tests/harness/postgres.py``, the one the hub's tests start); without its
programs those rows say "no PostgreSQL".

**1,000 pending from 100 agents.** A SQLite hub store with 1,000 pending entries from 100
agents vs one: ``HubStore.pending()`` (what a desk reads when it connects) and
``HubStore.get`` of one entry (what it reads on each change heard), paired runs. Then the
inbox: the entries as a desk sees them from the hub (``hub/desks.py``'s ``announcement``:
the batch with ``rpc_id`` = the entry's id, its ``age`` and ``source`` from what the hub
knows of the asker), all through one link as through ``dsh attach --hub``, in the real
``TerminalInbox``: 1,000 entries vs one (**budget ≤ 1.2×**, the issue's), vs two and vs a
screenful (15). One key (↓, ↑ in turn) timed until the screen has redrawn, as
``bench/inbox.py`` times it, but the four lists are shown at once in one event loop and
take their keys in turn (``paired_key_latencies``): rounds of a few hundred keys a list
one after the other read 0.7× to 1.4× for two lists drawing the same rows on this shared
machine, keys microseconds apart read within a few percent. Each round's median a list,
nine rounds, garbage collected before each; the ratio is the median of the rounds'. With
one entry a key moves nothing and nothing is written; with two or more it remakes and
writes the two rows the cursor moved between (``LineRenderer``), whatever the length, so
against one entry the row times moving the cursor at all: 1.12-1.20× (median 1.14×, 13
runs at load 2-9; 1.14-1.22× before issue 47's last pass), of which writing and flushing
the two rows is about 9 points, while 1,000 entries read 0.98-1.02× against two
(``docs/performance.md``, "The hub").
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from bench.context import Context
from bench.proc import CHECKOUT
from bench.table import Row, at_most, below

BUDGET = 1.2  # an inbox key with 1,000 hub entries vs one
ENTRIES = 2_000  # answered per run
AGENTS = 100
PENDING = 1_000  # from AGENTS agents
RACED = 10  # every RACED-th entry is answered by both processes
ANSWER = {"type": "question/answer", "answers": [{"id": "db", "selected": ["PostgreSQL"]}]}


def _batch(index: int) -> dict[str, Any]:
    """A ``question/requested`` event as the relay writes it, without ``rpc_id``."""
    return {"type": "question/requested", "session_id": f"s_{index % AGENTS:04d}",
            "call_id": f"call_{index}", "declinable": False, "review": False,
            "delivery": "wait",
            "questions": [{"id": "db", "header": "DB",
                           "question": f"Which database for service {index}?",
                           "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]}


def _fill(location: str, entries: int, agents: int) -> list[str]:
    """``entries`` pending questions from ``agents`` agents; their ids, oldest first."""
    from dsh_cli.hub.store import HubStore

    with HubStore.open(location, replica="bench") as store:
        return [store.ask(token=f"agent-{index % agents:03d}", batch=_batch(index),
                          agent=f"Claude Code {index % agents}", machine="ci-runner",
                          cwd=f"/srv/app-{index % agents}").id
                for index in range(entries)]


# -- answers per second ------------------------------------------------------------------

def _lists(ids: list[str], processes: int) -> list[list[str]]:
    """Each process's answers, in order: its share, and every RACED-th entry in every list
    (at the same place in each, so the processes reach it together)."""
    lists: list[list[str]] = [[] for _ in range(processes)]
    for index, entry_id in enumerate(ids):
        if index % RACED == 0:
            for answers in lists:
                answers.append(entry_id)
        else:
            lists[index % processes].append(entry_id)
    return lists


def _race(ctx: Context, location: str, lists: list[list[str]]) -> tuple[float, list[list[str]]]:
    """Seconds for one process per list to answer its list; the ids each process won."""
    workers = [subprocess.Popen([sys.executable, "-m", "bench.hub", "answer", location,
                                 f"human-{n}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=ctx.env, cwd=CHECKOUT, text=True)
               for n in range(len(lists))]
    try:
        for worker, answers in zip(workers, lists, strict=True):
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write(json.dumps(answers) + "\n")
            worker.stdin.flush()
        for worker in workers:  # each has its store open
            assert worker.stdout is not None
            if worker.stdout.readline() != "ready\n":
                raise RuntimeError(f"an answering process exited {worker.wait()}")
        started = time.perf_counter()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        won = []
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline()
            if not line:
                raise RuntimeError(f"an answering process exited {worker.wait()}")
            won.append(json.loads(line))
        return time.perf_counter() - started, won
    finally:
        for worker in workers:
            if worker.stdin is not None:
                worker.stdin.close()
            if worker.wait(60) != 0:
                raise RuntimeError(f"an answering process exited {worker.returncode}")


def _double_wins(location: str, ids: list[str], won: list[list[str]]) -> int:
    """Entries won twice: by two processes' own tallies or in the store's audit; an entry
    left pending or a tally the store disagrees with is a broken run, not a figure."""
    from dsh_cli.hub.store import HubStore

    tallied = Counter(entry_id for ids_won in won for entry_id in ids_won)
    answers: Counter[str] = Counter()
    with HubStore.open(location, replica="bench") as store:
        after = 0
        while page := store.audit(after=after):
            answers.update(row.entry_id for row in page if row.action == "answer")
            after = page[-1].id
        left = store.pending(limit=1)
        # a sample: the audit above already covers every entry
        by = Counter(entry.answered_by for entry_id in ids[:50]
                     if (entry := store.get(entry_id)) is not None)
    if left or set(tallied) != set(ids) or set(answers) != set(ids):
        raise RuntimeError(f"{len(set(ids) - set(tallied))} of {len(ids)} entries unanswered")
    expected = Counter(f"human-{n}" for n, ids_won in enumerate(won)
                       for entry_id in ids_won if entry_id in ids[:50])
    if by != expected:
        raise RuntimeError(f"the store's winners {dict(by)} are not the processes' "
                           f"{dict(expected)}")
    return sum(count > 1 for count in tallied.values()) + sum(
        count > 1 for count in answers.values())


def _answers_per_second(ctx: Context, location: Callable[[], str], entries: int,
                        processes: int) -> tuple[float, int]:
    """Entries settled per second by ``processes`` processes on a fresh store; double wins."""
    where = location()
    ids = _fill(where, entries, AGENTS)
    lists = _lists(ids, 2)
    if processes == 1:
        lists = [[entry_id for answers in lists for entry_id in answers]]
    seconds, won = _race(ctx, where, lists)
    return len(ids) / seconds, _double_wins(where, ids, won)


def answer_worker(location: str, by: str) -> None:
    """A hub process's answering: its list from stdin, "ready" once its store is open,
    then on "go" every answer in turn; the ids it won, as JSON."""
    from dsh_cli.hub.records import NotPending
    from dsh_cli.hub.store import HubStore

    answers = json.loads(sys.stdin.readline())
    with HubStore.open(location, replica=by) as store:
        print("ready", flush=True)
        sys.stdin.readline()
        won = [entry_id for entry_id in answers
               if not isinstance(store.answer(entry_id, ANSWER, by), NotPending)]
    print(json.dumps(won), flush=True)


_CLUSTER: list[Any] = []  # this run's throwaway PostgreSQL (None: no server), once looked for


def postgres_cluster() -> Any:
    """The throwaway cluster the hub's tests start (``tests/harness/postgres.py``), one for
    every hub measure of this run, stopped at exit; None without the server's programs."""
    if not _CLUSTER:
        tests = str(CHECKOUT / "tests")
        if tests not in sys.path:
            sys.path.insert(0, tests)
        from harness.postgres import postgres_bin, throwaway_cluster

        bindir = postgres_bin()
        if bindir is None:
            _CLUSTER.append(None)
        else:
            running = contextlib.ExitStack()
            _CLUSTER.append(running.enter_context(throwaway_cluster(bindir)))
            atexit.register(running.close)
    return _CLUSTER[0]


def _answer_rows(ctx: Context) -> list[Row]:
    entries = 20 if ctx.smoke else ENTRIES
    sqlite: list[float] = []
    postgres: list[float] = []
    doubles: list[float] = []
    counter = iter(range(10**6))

    def sqlite_file() -> str:
        return str(ctx.work / f"hub-{next(counter)}.db")

    cluster = postgres_cluster()
    label = f"{entries:,} entries, every {RACED}th raced"
    if cluster is None:
        for _ in range(ctx.runs(3)):
            sqlite.append(_answers_per_second(ctx, sqlite_file, entries, 1)[0])
        return [Row("hub answers/s, 2 processes on PostgreSQL: no PostgreSQL "
                    "(no initdb, pg_ctl; bash .ci/run installs them)", "batches/s", []),
                Row(f"hub answers/s, 1 process on SQLite, {label}", "batches/s", sqlite),
                Row("hub double wins on PostgreSQL: no PostgreSQL", "entries", [])]
    for _ in range(ctx.runs(3)):
        sqlite.append(_answers_per_second(ctx, sqlite_file, entries, 1)[0])
        rate, double = _answers_per_second(ctx, cluster.create_schema, entries, 2)
        postgres.append(rate)
        doubles.append(double)
    return [Row(f"hub answers/s, 2 processes on PostgreSQL, {label}", "batches/s", postgres,
                sqlite, "1 on SQLite", paired=True),
            Row("hub double wins on PostgreSQL (entries settled twice)", "entries", doubles,
                budget="0", check=below(0))]


# -- 1,000 pending from 100 agents -------------------------------------------------------

def _reads(location: str, reads: int) -> tuple[float, float]:
    """Median milliseconds of ``pending()``, microseconds of ``get`` of the newest entry."""
    from dsh_cli.hub.store import HubStore

    with HubStore.open(location, replica="bench") as store:
        newest = store.pending()[-1].id
        listed, got = [], []
        # each in a loop of its own: a 1,000-row read between two gets would time the
        # caches it emptied, not the get
        for _ in range(reads):
            started = time.perf_counter()
            store.pending()
            listed.append(time.perf_counter() - started)
        for _ in range(reads):
            started = time.perf_counter()
            store.get(newest)
            got.append(time.perf_counter() - started)
    return statistics.median(listed) * 1000, statistics.median(got) * 1e6


def _hub_inbox(location: str) -> Callable[[int, Any, Any], Any]:
    """``bench/inbox.py``'s show for the inbox list fed from the hub store at ``location``."""
    from dsh_cli.hub.desks import announcement
    from dsh_cli.hub.store import HubStore

    with HubStore.open(location, replica="bench") as store:
        pending = store.pending()
        with store.engine.transaction() as tx:
            now = tx.now()
    events = [announcement(entry, now).to_json() for entry in pending]

    def show(entries: int, input: Any, output: Any) -> Any:
        from dsh_cli.desk.inbox import Inbox
        from dsh_cli.desk.inbox_terminal import TerminalInbox

        inbox = Inbox()
        link = object()  # one HubLink brings every entry
        for event in events[:entries]:
            inbox.add(link, event)
        picker = TerminalInbox(input=input, output=output)
        return picker.pick(inbox), lambda: picker.app, "\x04"

    return show


def _pending_rows(ctx: Context) -> list[Row]:
    # prompt-toolkit: not in the answering processes
    from bench.inbox import paired_key_latencies

    many, agents = (40, 4) if ctx.smoke else (PENDING, AGENTS)
    full, one = str(ctx.work / "hub-many.db"), str(ctx.work / "hub-one.db")
    _fill(full, many, agents)
    _fill(one, 1, 1)
    reads = 5 if ctx.smoke else 200
    listed: dict[str, list[float]] = {full: [], one: []}
    got: dict[str, list[float]] = {full: [], one: []}
    for _ in range(ctx.runs(5)):
        for where in (one, full):
            pending, entry = _reads(where, reads)
            listed[where].append(pending)
            got[where].append(entry)
    show = _hub_inbox(full)
    keys, rounds = (10, 1) if ctx.smoke else (300, 9)
    sizes = {"many": many, "15": 15, "2": 2, "1": 1}
    runs: dict[str, list[float]] = {name: [] for name in sizes}
    asyncio.run(paired_key_latencies(show, list(sizes.values()), 4))  # imports, first frames
    for _ in range(ctx.runs(rounds)):
        gc.collect()  # no round collects the garbage of the one before
        latencies = asyncio.run(paired_key_latencies(show, list(sizes.values()), keys))
        for name, measured in zip(sizes, latencies, strict=True):
            runs[name].append(statistics.median(measured))
    label = f"{many:,} pending from {agents} agents"
    return [
        Row(f"hub store: pending() read, {label} vs 1", "ms", listed[full], listed[one],
            "1 pending", paired=True),
        Row(f"hub store: get() of one entry, {label} vs 1", "µs", got[full], got[one],
            "1 pending", paired=True),
        Row(f"hub inbox keys, {label} vs 1: p50", "ms", runs["many"], runs["1"], "1 entry",
            f"≤ {BUDGET} × 1 entry", at_most(BUDGET), paired=True),
        Row(f"hub inbox keys, {label} vs 2 (a key moves the cursor): p50", "ms",
            runs["many"], runs["2"], "2 entries", paired=True),
        Row(f"hub inbox keys, {label} vs 15: p50", "ms", runs["many"], runs["15"],
            "15 entries", paired=True),
    ]


def measure(ctx: Context) -> list[Row]:
    return [*_answer_rows(ctx), *_pending_rows(ctx)]


if __name__ == "__main__":  # python -m bench.hub answer LOCATION BY: one answering process
    if sys.argv[1:2] == ["answer"] and len(sys.argv) == 4:
        answer_worker(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: python -m bench.hub answer LOCATION BY")
