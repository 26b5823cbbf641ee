"""The man page and the README's Reference describe exactly the commands and flags that exist.

The Click application is walked (lazy commands loaded, groups recursed); each command must
have its own heading in both documents, listing exactly its flags, and every flag must have
an entry in the man page's OPTIONS. Documenting a flag or command that does not exist fails
too, so the docs can drift in neither direction.
"""

from __future__ import annotations

import re

from docs_reading import FLAG, roff_to_text

HELP_FLAGS = {"-h", "--help"}


def command_path(heading: str) -> str | None:
    """``"dsh sessions show ID"`` -> ``"sessions show"``; None when not a command heading."""
    words = heading.replace("`", "").strip().strip('"').split()
    if not words or words[0] != "dsh":
        return None
    path = []
    for word in words[1:]:
        if not re.fullmatch(r"[a-z][a-z-]*", word):
            break
        path.append(word)
    return " ".join(path)


def man_sections(source: str) -> dict[str, list[str]]:
    """``.SH`` name -> its source lines."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in source.splitlines():
        if line.startswith(".SH "):
            current = sections.setdefault(roff_to_text(line[4:]).strip('" '), [])
        else:
            current.append(line)
    return sections


def subsections(lines: list[str]) -> dict[str, list[str]]:
    """``.SS`` heading (plain text) -> its lines."""
    found: dict[str, list[str]] = {}
    current: list[str] = []
    for line in lines:
        if line.startswith(".SS "):
            current = found.setdefault(roff_to_text(line[4:]).strip('" '), [])
        else:
            current.append(line)
    return found


def man_commands(source: str) -> dict[str, tuple[str, set[str]]]:
    """COMMANDS: path -> (heading, the flags of its "Options:" paragraph)."""
    found = {}
    for heading, lines in subsections(man_sections(source)["COMMANDS"]).items():
        path = command_path(heading)
        assert path is not None, f"COMMANDS heading {heading!r} does not name a command"
        text = roff_to_text("\n".join(lines))
        _, _, options = text.partition("Options:")
        found[path] = (heading, set(FLAG.findall(options)))
    return found


def man_option_tags(source: str) -> set[str]:
    """The flags of every ``.TP`` tag in OPTIONS."""
    lines = man_sections(source)["OPTIONS"]
    tags = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith(".TP")]
    return {flag for tag in tags for flag in FLAG.findall(roff_to_text(tag))}


def readme_commands(readme: str) -> set[str]:
    """The command paths of the README's table of commands (`dsh PATH ...` in its rows)."""
    _, found, rest = readme.partition("\n## Commands\n")
    assert found, "README.md has no '## Commands' section"
    table = rest.split("\n## ", 1)[0]
    paths = set()
    for row in re.findall(r"^\| `dsh([^`]*)` \|", table, flags=re.M):
        words = [word for word in row.split() if not word.isupper() and "[" not in word]
        paths.add(" ".join(words))
    return paths


def test_every_command_has_a_man_heading_listing_exactly_its_flags(commands, man_source):
    documented = man_commands(man_source)
    for command in commands:
        if not command.path:
            continue  # the group's own flags are global options, checked below
        if not command.flags and not command.arguments and any(
            path.startswith(command.path + " ") for path in documented
        ):
            continue  # a bare group such as `sessions`, documented through its subcommands
        assert command.path in documented, f"man page: no COMMANDS entry for dsh {command.path}"
        heading, flags = documented[command.path]
        assert flags == set(command.flags), (
            f"man page, dsh {command.path}: missing {sorted(command.flags - flags)}, "
            f"not a real flag {sorted(flags - command.flags)}"
        )
        for argument in command.arguments:
            assert argument in heading, f"man page: {argument} missing from {heading!r}"


def test_the_man_page_documents_no_command_that_does_not_exist(commands, man_source):
    real = {command.path for command in commands}
    ghosts = set(man_commands(man_source)) - real
    assert not ghosts, f"man page documents commands that do not exist: {sorted(ghosts)}"


def test_every_flag_has_an_entry_in_man_options_and_every_entry_is_real(commands, man_source):
    real = {flag for command in commands for flag in command.flags} | HELP_FLAGS
    tags = man_option_tags(man_source)
    assert real - tags == set(), f"man OPTIONS lacks entries for {sorted(real - tags)}"
    assert tags - real == set(), f"man OPTIONS documents unknown flags {sorted(tags - real)}"


def test_the_synopsis_names_every_top_level_command(man_source):
    from dsh_cli.cli import COMMANDS

    synopsis = roff_to_text("\n".join(man_sections(man_source)["SYNOPSIS"]))
    for name in COMMANDS:
        assert re.search(rf"\b{name}\b", synopsis), f"SYNOPSIS does not name dsh {name}"


def test_the_readme_lists_every_command_and_no_other(commands, readme):
    documented = readme_commands(readme)
    real = {command.path for command in commands}
    groups = {path for path in real if any(other.startswith(path + " ") for other in real)}
    missing = real - groups - {""} - documented
    assert not missing, f"README Commands lacks {sorted(missing)}"
    assert documented - real == set(), f"README lists unknown commands {sorted(documented - real)}"


def test_the_drift_check_notices_a_missing_flag(commands, man_source):
    """A flag dropped from a command's Options paragraph is caught (guards the parser)."""
    run = next(command for command in commands if command.path == "run")
    _, flags = man_commands(man_source.replace(".BR \\-\\-jsonl ,\n", "", 1))["run"]
    assert "--jsonl" in run.flags and "--jsonl" not in flags


def test_every_command_answers_dash_h_as_the_reference_says(commands):
    from click.testing import CliRunner

    from dsh_cli.cli import main

    for command in commands:
        result = CliRunner().invoke(main, [*command.path.split(), "-h"])
        assert result.exit_code == 0, f"dsh {command.path} -h: {result.output}"
        assert result.output.startswith("Usage: "), result.output
