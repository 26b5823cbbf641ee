"""Bash rules read a command as the shell does: each row checked against the real shells.

Every command of ``fakes/shell_commands.py`` runs under the real ``bash`` in a sandbox
whose ``PATH`` holds only recording shims (``fakes/shell_shims.py``): what the allow rule
allows must run, under bash, zsh and dash, exactly the argv the rule saw, and every ``rm``
bash runs must be one the deny rule denies.
"""

from __future__ import annotations

import time

import pytest
from fakes.shell_commands import ALLOW, CASES, DENY
from fakes.shell_shims import Sandbox, shell_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_cli.permissions.rules import Rules
from dsh_cli.permissions.shell import MAX_COMMAND, covers, read_command
from dsh_cli.permissions.vocabulary import Hints

RULES = Rules(allow=tuple(f"Bash({spec})" for spec in ALLOW),
              deny=tuple(f"Bash({spec})" for spec in DENY))
NO_ZSH = "zsh is not installed (bash .ci/run installs it): the zsh half of this test cannot run"
ZSH_CASES = ("git status =(touch X)", "git status *(e:'touch X':)",
             "git status ${(e):-\\$\\(touch X\\)}", "git status *(e:'rm -f VICTIM':)")


def verdict(command: str) -> str:
    return RULES.verdict("Bash", Hints(), None, {"command": command})[0]


def shells() -> list[str]:
    """The shells every allowed command is run under; zsh is required (skip otherwise).

    Not fish: its ``ls`` is a function that adds ``--color=auto``, so the argv differs by
    the shell's own definitions, not by how it reads words (checked by hand: 1,500
    generated commands, 512 allowed, every one the same argv in fish 3.6)."""
    if shell_path("zsh") is None:
        pytest.skip(NO_ZSH)
    return [name for name in ("bash", "zsh", "dash") if shell_path(name) is not None]


@pytest.fixture
def sandbox(tmp_path):
    return Sandbox.make(tmp_path / "sandbox")


def test_the_table_has_sixty_commands_and_every_verdict():
    assert len(CASES) >= 60
    assert {expected for _, expected in CASES} == {"allow", "ask", "deny"}


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[repr(c) for c, _ in CASES])
def test_each_command_is_decided_as_bash_executes_it(command, expected, sandbox):
    assert verdict(command) == expected
    ran = sandbox.executed("bash", command)
    if any(argv[0] == "rm" for argv in ran):
        assert expected == "deny", ran  # every rm bash runs is one the rule denies
    if expected == "deny" and read_command(command).problem is None:
        assert any("rm" in argv for argv in ran), ran  # the row really runs rm
    if expected == "allow":
        [words] = read_command(command).commands
        for shell in shells():
            assert sandbox.executed(shell, command) == [words], shell


@pytest.mark.parametrize("command", ZSH_CASES)
def test_zsh_runs_another_command_in_each_and_the_allow_rule_asks(command, sandbox):
    if shell_path("zsh") is None:
        pytest.skip(NO_ZSH)
    ran = sandbox.executed("zsh", command)
    assert any(argv[0] in ("touch", "rm") for argv in ran), ran  # what zsh makes of it
    assert verdict(command) == "ask"


# zsh's ``=cmd`` is word-initial after parts that may be empty, not only at the first character
EMPTY_BEFORE = ("git status ''=ls", 'git status ""=ls', "git status $''=ls",
                'git status "$x"=ls', "git status ''=0")


@pytest.mark.parametrize("command", EMPTY_BEFORE)
def test_an_equals_after_empty_quotes_is_zshs_and_the_allow_rule_asks(command, sandbox):
    if shell_path("zsh") is None:
        pytest.skip(NO_ZSH)
    [read] = read_command(command).commands
    assert sandbox.executed("zsh", command) != [read]  # zsh looked the word up as a command
    assert verdict(command) == "ask"


# words a model might write: plain ones, quoted ones, and every character a shell expands
_PIECES = st.one_of(
    st.text("abcXYZ019-_./:,+%@=", min_size=1, max_size=6),
    st.text("ab *?[]{}$~!^#=%\\\"`();&|<>", max_size=5).map(lambda text: f"'{text}'"),
    st.text("ab *?[]{}~^#=%'();&|<>", max_size=5).map(lambda text: f'"{text}"'),
    st.sampled_from(["*", "?", "[a]", "{a,b}", "~", "$x", "${x}", "$(x)", "`x`", "\\a", "!",
                     "^a", "a#", "=a", "%self", "(", ")", ";", "&", "|", ">", "<", "\t", "é",
                     "''", "'a''b'", "$'a'", "#"]),
)
_WORDS = st.lists(st.lists(_PIECES, min_size=1, max_size=3).map("".join), max_size=4)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_WORDS)
def test_whatever_the_allow_rule_allows_every_shell_runs_as_read(sandbox, words):
    command = " ".join(["git", "status", *words])
    if verdict(command) != "allow":
        return
    [read] = read_command(command).commands
    for shell in shells():
        assert sandbox.executed(shell, command) == [read], (shell, command)


_RM_PIECES = st.sampled_from([
    "rm", "'rm'", "r\\m", "r''m", "{rm,x}", "$'r'm", "x", "-rf", ";", "&&", "|", "(", ")",
    "{", "}", "$(", "`", "\n", "2>", ">", "<", "FOO=1", "git", "'", "\"", "\\", "$x", "$()",
    "if", "then", "fi", "!", "#", "sudo", "eval", "bash -c", "<(", "${x:-", "*", "&", "\r"])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_RM_PIECES, min_size=1, max_size=8))
def test_every_rm_bash_runs_is_denied(sandbox, pieces):
    command = " ".join(pieces)
    if any(argv[0] == "rm" for argv in sandbox.executed("bash", command)):
        assert verdict(command) == "deny", command


@pytest.mark.parametrize("command", [
    "{a,b}" * 40, "sudo " + "eval a " * 14000, "$(" * 5000, "(" * 5000, "`" * 3 + "\\`" * 9000,
    "bash -c " * 12000, "sudo " + "a " * 49000 + "rm", "a" * (MAX_COMMAND + 1)])
def test_a_hostile_command_is_read_in_bounded_time(command):
    started = time.monotonic()
    reading = read_command(command)
    assert time.monotonic() - started < 10  # seconds, on a loaded machine; about 1 alone
    if reading.problem is not None:
        assert verdict(command) != "allow"


def test_past_the_cap_of_built_words_a_deny_rule_is_taken_to_match():
    """Each place a built word may start a program is read to the command's end; a command of
    more such places than ``BUILT_MATCHES`` is denied (or asked) unread, never read at a
    quadratic cost (a 16 KB command of them took 4 s, a 100 KB one minutes)."""
    from dsh_cli.core.limits import BUILT_MATCHES

    few = '"$x".sh ' * 3  # each word may run the next, but none can be rm: it ends in .sh
    many = '"$x".sh ' * (BUILT_MATCHES + 1)
    assert not covers("rm:*", few, every=False)
    assert covers("rm:*", many, every=False)
    assert covers("rm -rf:*", '"$x".sh ' * 12_000, every=False)
