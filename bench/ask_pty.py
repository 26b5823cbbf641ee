"""``dsh ask`` with 3 options on a pseudo-terminal: first frame, exit, peak memory.

The floor is the least any prompter on dsh's stack can do: a Click command that builds
its options with pydantic and shows prompt-toolkit's ``choice()``. Both are answered with
enter as soon as the last option is on screen.
"""

from __future__ import annotations

from bench.context import Context
from bench.proc import dsh_argv, python_argv, run_on_pty
from bench.table import Row, at_most

FRAME_BUDGET = 1.1
MEMORY_BUDGET = 1.1
PEER_BUDGET = 1.3  # issue 16: within 1.3x of questionary, which carries neither Click nor pydantic
LABELS = ("alpha", "bravo", "charlie")

FLOOR = '''\
import click
from pydantic import BaseModel
from prompt_toolkit.shortcuts import choice


class Option(BaseModel):
    label: str


@click.command()
@click.option("-q", "--question", required=True)
@click.option("-o", "--option", "labels", multiple=True)
def main(question, labels):
    options = [Option(label=label) for label in labels]
    picked = choice(message=question, options=[(o.label, o.label) for o in options])
    click.echo(picked)


if __name__ == "__main__":
    main()
'''


PEER = '''\
import sys

import questionary

print(questionary.select(sys.argv[1], choices=sys.argv[2:]).ask())
'''


# questionary behind what dsh's stack costs before any prompter runs: Click imported and one
# pydantic model built and used. Shown for context: how far 1.3x is from this stack.
PEER_STACK = '''\
import sys

import click  # noqa: F401
from pydantic import BaseModel


class Option(BaseModel):
    label: str


labels = [Option(label=label).label for label in sys.argv[2:]]

import questionary

print(questionary.select(sys.argv[1], choices=labels).ask())
'''


def _args() -> list[str]:
    args = ["-q", "Deploy?"]
    for label in LABELS:
        args += ["-o", label]
    return args


def measure(ctx: Context) -> list[Row]:
    floor_script = ctx.script("floor_choice.py", FLOOR)
    env = ctx.env
    commands = {"floor": python_argv(floor_script, *_args()), "dsh": dsh_argv("ask", *_args())}
    try:
        import questionary  # noqa: F401  (the bench extra)
    except ImportError:
        pass
    else:
        peer_script = ctx.script("peer_questionary.py", PEER)
        commands["questionary"] = python_argv(peer_script, "Deploy?", *LABELS)
        stack_script = ctx.script("peer_questionary_stack.py", PEER_STACK)
        commands["questionary+stack"] = python_argv(stack_script, "Deploy?", *LABELS)
    frame: dict[str, list[float]] = {name: [] for name in commands}
    exit_: dict[str, list[float]] = {name: [] for name in commands}
    memory: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ctx.runs(9)):
        for name, argv in commands.items():
            result = run_on_pty(argv, env, expect=LABELS[-1].encode(), key=b"\r")
            if result.status != 0 or LABELS[0].encode() not in result.output.split(
                    LABELS[-1].encode())[-1]:
                raise RuntimeError(f"{argv}: exit {result.status}, no answer: {result.output!r}")
            frame[name].append(result.first_frame * 1000)
            exit_[name].append(result.exit * 1000)
            memory[name].append(result.max_rss_mb)
    base = "choice() floor"
    peer = [Row("dsh ask, 3 options, pty: first frame vs questionary", "ms", frame["dsh"],
                frame["questionary"], "questionary", f"≤ {PEER_BUDGET} × peer",
                at_most(PEER_BUDGET)),
            Row("questionary + Click + a pydantic model, pty: first frame", "ms",
                frame["questionary+stack"], frame["questionary"], "questionary"),
            ] if "questionary" in commands else []
    return [*peer,
        Row("dsh ask, 3 options, pty: first frame", "ms", frame["dsh"], frame["floor"], base,
            f"≤ {FRAME_BUDGET} × floor", at_most(FRAME_BUDGET)),
        Row("dsh ask, 3 options, pty: process exit", "ms", exit_["dsh"], exit_["floor"], base),
        Row("dsh ask, 3 options, pty: peak memory", "MB", memory["dsh"], memory["floor"], base,
            f"≤ {MEMORY_BUDGET} × floor", at_most(MEMORY_BUDGET)),
    ]
