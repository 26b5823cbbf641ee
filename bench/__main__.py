"""``python -m bench [--smoke] [--only NAME ...]``: run the measures, print the table."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.context import Context
from bench.proc import compile_dsh
from bench.table import Row, format_table

# module -> what it measures; run in this order
MEASURES = {
    "startup": "dsh --help / --version vs a bare Click app",
    "ask_pty": "dsh ask on a pseudo-terminal vs a choice() floor",
    "ask_answers": "dsh ask --answers vs a Click + pydantic floor",
    "keys": "key latency and throughput vs questionary and bare prompt-toolkit",
    "previews": "option previews: the first frame and scrolling keys vs no preview",
    "storm": "the 726-key storm on a 50-option list in a pty vs questionary",
    "relay": "dsh run --jsonl round trips",
    "mcp_desk": "dsh mcp + dsh attach --jsonl round trips vs the bare SDK echo floor",
    "mcp_ready": "dsh mcp's initialize and tools/list answers vs a bare SDK server",
    "acp": "dsh acp's initialize answer vs a bare SDK agent; its first text vs dsh run --jsonl",
    "agent": "the agent loop vs the bare OpenAI SDK",
    "inbox": "keys in dsh attach's inbox list with 500 entries vs one",
    "later": "an agent loop turn with 100 async question batches pending vs none",
    "door": "dsh mcp --http's door admitting a session with 4,200 tasks kept vs 100",
    "store": "session store append and resume",
    "history": "a batch reaching the desk and dsh history's memory, 12,000 stored batches "
               "vs none",
    "hub": "answers/s two hub processes settle on one PostgreSQL vs one on SQLite; 1,000 "
           "pending from 100 agents: the store's reads and an inbox key vs one entry",
    "hub_serve": "dsh hub serve: ask → shown at a desk on the other hub process vs dsh mcp + "
                 "attach; its memory with 10,000 pending async asks vs idle",
    "trust": "the digest a trusted project's python3 -m pkg entry takes (1,500 files)",
    "mcp": "an MCP tool call through dsh vs the bare SDK; the bounded stdio transport vs "
           "the SDK's; dsh chat start-up with MCP",
}
RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--smoke", action="store_true",
                        help="each measure once with tiny sizes: checks that they run")
    parser.add_argument("--only", nargs="+", choices=list(MEASURES), metavar="NAME",
                        help=f"run only these measures ({', '.join(MEASURES)})")
    parser.add_argument("--no-save", action="store_true",
                        help="do not write bench/results/ (a smoke run never does)")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    compile_dsh()
    with tempfile.TemporaryDirectory(prefix="dsh-bench-") as work:
        ctx = Context(smoke=args.smoke, work=Path(work))
        for name in args.only or MEASURES:
            started = time.perf_counter()
            print(f"# {name}: {MEASURES[name]} …", file=sys.stderr, flush=True)
            module = importlib.import_module(f"bench.{name}")
            rows.extend(module.measure(ctx))
            print(f"#   {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    table = format_table(rows)
    print(table)
    unmet = [row.measure for row in rows if row.met is False]
    print(f"\n{sum(row.met is True for row in rows)} budgets met, {len(unmet)} not met"
          + (f": {'; '.join(unmet)}" if unmet else ""))
    if not args.smoke and not args.no_save:
        _save(rows, table)
    return 0


def _save(rows: list[Row], table: str) -> None:
    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"{stamp}.txt").write_text(table + "\n", encoding="utf-8")
    with open(RESULTS / f"{stamp}.jsonl", "w", encoding="utf-8") as file:
        for row in rows:
            file.write(json.dumps(row.to_json()) + "\n")


if __name__ == "__main__":
    sys.exit(main())
