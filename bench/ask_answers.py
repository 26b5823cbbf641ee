"""``dsh ask --answers FILE`` (no UI) as a whole process vs a Click + pydantic floor."""

from __future__ import annotations

import json

from bench.context import Context
from bench.proc import dsh_argv, python_argv, run
from bench.table import Row, at_most

BUDGET = 1.2

# The same job with nothing but Click and pydantic: read the answers, check, print JSON.
FLOOR = '''\
import json

import click
from pydantic import BaseModel


class Answer(BaseModel):
    id: str
    selected: list[str]


class Answers(BaseModel):
    answers: list[Answer]


@click.command()
@click.option("-q", "--question", required=True)
@click.option("-o", "--option", "labels", multiple=True)
@click.option("--answers", "answers_path", required=True)
def main(question, labels, answers_path):
    with open(answers_path, encoding="utf-8") as file:
        given = json.load(file)
    batch = Answers(answers=[Answer(id="q1", selected=given["q1"])])
    assert all(label in labels for label in batch.answers[0].selected)
    click.echo(batch.model_dump_json())


if __name__ == "__main__":
    main()
'''


def measure(ctx: Context) -> list[Row]:
    answers = ctx.work / "answers.json"
    answers.write_text(json.dumps({"q1": ["yes"]}), encoding="utf-8")
    floor_script = ctx.script("floor_answers.py", FLOOR)
    args = ["-q", "Deploy?", "-o", "yes", "-o", "no", "--answers", str(answers)]
    commands = {"floor": python_argv(floor_script, *args), "dsh": dsh_argv("ask", *args)}
    env = ctx.env
    ms: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ctx.runs(20)):
        for name, argv in commands.items():
            result = run(argv, env)
            if result.status != 0 or b"yes" not in result.stdout:
                raise RuntimeError(f"{argv}: exit {result.status}: {result.stdout!r}")
            ms[name].append(result.seconds * 1000)
    return [Row("dsh ask --answers, whole process", "ms", ms["dsh"], ms["floor"],
                "click+pydantic floor", f"≤ {BUDGET} × floor", at_most(BUDGET))]
