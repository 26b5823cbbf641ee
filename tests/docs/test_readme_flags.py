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
