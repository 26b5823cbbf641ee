"""Reading the docs under test: the Click app walked, roff turned into plain words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[2]
MAN_PAGE = ROOT / "man" / "dsh.1"
README = ROOT / "README.md"

# A flag as written in prose: not the tail of a hyphenated word like "non-interactive".
FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")


@dataclass(frozen=True)
class CommandDoc:
    """One command of the Click app: its path (``"sessions show"``), flags and arguments."""

    path: str
    flags: frozenset[str]
    arguments: tuple[str, ...]


def walk(command: click.Command, ctx: click.Context, path: str = "") -> list[CommandDoc]:
    """Every command reachable from ``command``, groups included, help options left out."""
    flags: set[str] = set()
    arguments: list[str] = []
    for param in command.get_params(ctx):
        if isinstance(param, click.Option):
            # the help option's name changed across Click releases; its flags did not
            if param.hidden or (param.is_eager and "--help" in param.opts):
                continue
            flags |= {*param.opts, *param.secondary_opts}
        elif isinstance(param, click.Argument):
            arguments.append(param.human_readable_name)
    found = [CommandDoc(path, frozenset(flags), tuple(arguments))]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{path} {name} is listed but cannot be loaded"
            sub_ctx = click.Context(sub, info_name=name, parent=ctx)
            found += walk(sub, sub_ctx, f"{path} {name}".strip())
    return found


def roff_to_text(source: str) -> str:
    """Roff source as plain words: font changes, dash, quote and no-op escapes undone."""
    text = re.sub(r"\\f(\[[A-Z]*\]|[A-Z])", "", source)
    text = text.replace("\\-", "-").replace("\\(dq", '"').replace("\\&", "").replace("\\%", "")
    return text.replace("\\e", "\\")
