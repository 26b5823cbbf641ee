"""Start-up: ``dsh --help`` and ``--version`` vs a bare Click app; ``permissions list`` vs help."""

from __future__ import annotations

from bench.context import Context
from bench.proc import dsh_argv, python_argv, run
from bench.table import Row, at_most

BUDGET = 1.3
# ``dsh permissions list`` reads one JSON file: it pays for no MCP, agent or UI import
LIST_BUDGET = 1.1

BARE_CLICK = '''\
import click


@click.group()
def cli():
    """A bare Click app."""


@cli.command()
def hello():
    """Say hello."""


if __name__ == "__main__":
    cli()
'''


def measure(ctx: Context) -> list[Row]:
    floor_script = ctx.script("bare_click.py", BARE_CLICK)
    env = ctx.env
    commands = {
        "floor": python_argv(floor_script, "--help"),
        "help": dsh_argv("--help"),
        "version": dsh_argv("--version"),
        "list": dsh_argv("permissions", "list"),
    }
    ms: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ctx.runs(20)):  # interleaved, so drift hits every side alike
        for name, argv in commands.items():
            result = run(argv, env)
            if result.status != 0:
                raise RuntimeError(f"{argv} exited {result.status}")
            ms[name].append(result.seconds * 1000)
    return [
        Row(f"dsh {flag}", "ms", ms[name], ms["floor"], "click --help",
            f"≤ {BUDGET} × floor", at_most(BUDGET))
        for name, flag in (("help", "--help"), ("version", "--version"))
    ] + [Row("dsh permissions list", "ms", ms["list"], ms["help"], "dsh --help",
             f"≤ {LIST_BUDGET} × dsh --help", at_most(LIST_BUDGET))]
