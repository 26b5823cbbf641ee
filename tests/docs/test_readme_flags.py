"""Every flag a README command line gives is one its command shows in ``--help``.

A hidden flag (an old spelling kept working) is not one a newcomer can look up: the
README names what ``dsh COMMAND --help`` names.
"""

from __future__ import annotations

import re
import shlex

from docs_reading import FLAG

HELP_FLAGS = {"-h", "--help", "-V", "--version"}


def command_lines(readme: str) -> list[list[str]]:
    """The words of every ``dsh …`` command in the README's shell blocks."""
    found = []
    for block in re.findall(r"^```sh\n(.*?)^```", readme, flags=re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            for part in re.split(r"\s*(?:&&|\||;|\$\(|`)\s*", line.split(" #", 1)[0]):
                try:
                    words = shlex.split(part, comments=True)
                except ValueError:
                    continue
                if words[:1] == ["dsh"]:
                    found.append(words)
    return found


def test_every_flag_on_a_readme_command_line_is_a_visible_flag_of_that_command(commands,
                                                                               readme):
    by_path = {command.path: command for command in commands}
    checked = 0
    for words in command_lines(readme):
        path: list[str] = []
        for word in words[1:]:
            if " ".join([*path, word]) in by_path:
                path.append(word)
            elif not word.startswith("-"):
                break
        command = by_path[" ".join(path)]
        for word in words[1:]:
            flag = word.split("=", 1)[0]
            if FLAG.fullmatch(flag) and flag not in HELP_FLAGS:
                assert flag in command.flags, (
                    f"README: `{' '.join(words)}` gives {flag}, which `dsh {command.path} "
                    f"--help` does not list")
                checked += 1
    assert checked > 10, "the README's command lines were not found"


def test_every_readme_command_gives_the_arguments_its_command_requires(readme):
    """`dsh sessions show --json` is a usage error: a span the README shows runs as written."""
    import click

    from dsh_cli.cli import main

    spans = re.findall(r"`(dsh [^`]+)`", " ".join(readme.split()))
    checked = 0
    for span in spans:
        words = span.split()
        command: click.Command = main
        ctx = click.Context(main, info_name="dsh")
        rest = words[1:]
        while rest and isinstance(command, click.Group):
            sub = command.get_command(ctx, rest[0])
            if sub is None:
                break
            ctx = click.Context(sub, info_name=rest[0], parent=ctx)
            command, rest = sub, rest[1:]
        required = [param for param in command.params
                    if isinstance(param, click.Argument) and param.required]
        if not required or not rest or "..." in span or "…" in span:
            continue  # a command named in prose, not a line to run
        valued = {opt for param in command.params if isinstance(param, click.Option)
                  and not param.is_flag and not param.count for opt in param.opts}
        given, skip = [], False
        for word in rest:
            if skip:
                skip = False
            elif word.startswith("-"):
                skip = word in valued
            else:
                given.append(word)
        assert len(given) >= len(required), f"README: `{span}` lacks {required[0].name.upper()}"
        checked += 1
    assert checked, "no README command with a required argument was found"
