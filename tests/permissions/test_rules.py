"""Permission rules: Claude Code's syntax, and deny, --yes, ask, allow, then the default."""

from __future__ import annotations

import pytest

from dsh_cli.permissions import Hints, Rules, matches


@pytest.mark.parametrize(("rule", "tool", "expected"), [
    ("mcp__git", "mcp__git__git_status", True),
    ("mcp__git", "mcp__github__list", False),
    ("mcp__git__git_status", "mcp__git__git_status", True),
    ("mcp__git__git_status", "mcp__git__git_statuses", False),
    ("mcp__git__*", "mcp__git__git_reset", True),
    ("mcp__git__*", "mcp__gitx__a", False),
    ("mcp__*__read*", "mcp__fs__read_file", True),
    ("", "anything", False),
    ("  mcp__git  ", "mcp__git__git_log", True),
    ("write_note", "write_note", True),
])
def test_a_rule_names_a_tool_a_server_or_a_glob(rule, tool, expected):
    assert matches(rule, tool) is expected


def test_deny_beats_every_other_rule_and_yes():
    rules = Rules(allow=("mcp__git",), ask=("mcp__git",), deny=("mcp__git__git_reset",),
                  allow_all=True)
    assert rules.verdict("mcp__git__git_reset", Hints())[0] == "deny"
    assert rules.verdict("mcp__git__git_status", Hints())[0] == "allow"


def test_ask_beats_allow_and_the_read_only_default():
    rules = Rules(allow=("mcp__git",), ask=("mcp__git__git_log",))
    assert rules.verdict("mcp__git__git_log", Hints(read_only=True))[0] == "ask"
    assert rules.verdict("mcp__git__git_diff", Hints())[0] == "allow"


def test_the_default_allows_read_only_tools_and_asks_for_the_rest():
    rules = Rules()
    assert rules.verdict("mcp__time__get_current_time", Hints(read_only=True))[0] == "allow"
    assert rules.verdict("mcp__git__git_reset", Hints(destructive=True))[0] == "ask"
    assert rules.verdict("mcp__x__y", Hints(read_only=False))[0] == "ask"


def test_ask_user_question_never_needs_permission():
    rules = Rules(deny=("ask_user_question", "*"))
    assert rules.verdict("ask_user_question", Hints())[0] == "allow"


def test_yes_allows_what_would_ask_and_says_why():
    verdict, why = Rules(ask=("mcp__git",), allow_all=True).verdict("mcp__git__git_reset",
                                                                     Hints())
    assert verdict == "allow" and "--yes" in why


def test_flags_merge_on_top_of_config():
    merged = Rules(allow=("a",)).merged(deny=["b"], allow_all=True)
    assert merged == Rules(allow=("a",), deny=("b",), allow_all=True)


def test_hints_come_from_mcp_annotations_in_either_form():
    assert Hints.from_annotations({"readOnlyHint": True, "destructiveHint": "yes"}) == Hints(
        read_only=True)

    from mcp_types import ToolAnnotations

    hints = Hints.from_annotations(ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                   open_world_hint=True))
    assert hints.to_json() == {"read_only": False, "destructive": True, "open_world": True}
    assert Hints.from_annotations(None) == Hints()


@pytest.mark.parametrize(("rule", "tool", "server", "expected"), [
    ("mcp__git", "mcp__git___x", "git_", False),
    ("mcp__git__*", "mcp__git___x", "git_", False),
    ("mcp__git_", "mcp__git___x", "git_", True),
    ("mcp__git", "mcp__git___x", "git", True),  # git's own tool "_x"
    ("mcp__git", "mcp__git___x", None, False),  # unknown server: every reading must match
    ("mcp__git__*", "mcp__git__status", None, True),
])
def test_a_rule_matches_the_real_server_and_tool(rule, tool, server, expected):
    assert matches(rule, tool, server) is expected


def test_an_ambiguous_name_is_denied_by_any_reading_and_allowed_only_by_every_one():
    rules = Rules(allow=("mcp__git",), deny=("mcp__git_",))
    assert rules.verdict("mcp__git___x", Hints())[0] == "deny"
    assert Rules(allow=("mcp__git",)).verdict("mcp__git___x", Hints())[0] == "ask"


def test_a_tool_claiming_read_only_and_destructive_asks():
    assert Rules().verdict("mcp__x__y", Hints(read_only=True, destructive=True))[0] == "ask"
    assert "server says" in Rules().verdict("mcp__x__y", Hints(read_only=True))[1]


@pytest.mark.parametrize(("command", "verdict"), [
    ("git status", "allow"), ("git status -s", "allow"), ("git statusx", "ask"),
    ("git status && curl x | sh", "ask"), ("git status $(curl x)", "ask"),
    ("git status > /etc/passwd", "ask"), ("git status\nrm -rf ~", "deny"),
    ("ls", "allow"), ("ls -la", "ask"), ("rm -rf build", "deny"), ("echo; rm x", "deny"),
])
def test_claude_codes_tool_specifiers_narrow_a_rule_by_the_command(command, verdict):
    rules = Rules(allow=("Bash(git status:*)", "Bash(ls)"), deny=("Bash(rm:*)",))
    assert rules.verdict("Bash", Hints(), None, {"command": command})[0] == verdict
    assert rules.verdict("Edit", Hints(), None, {"command": command})[0] == "ask"  # not Bash
